package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/acp/acptest"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/runtest"
)

// The ACP tests play an editor with the official TypeScript client
// (testdata/acp/client.mjs, @agentclientprotocol/sdk from npm, installed by
// scripts/test.sh) against the built ask binary and the fake provider, and
// validate every line ask writes against the official schema.

// acpSeen is what client.mjs reports.
type acpSeen struct {
	Initialize struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	} `json:"initialize"`
	Session struct {
		Modes struct {
			Current   string `json:"currentModeId"`
			Available []struct {
				ID string `json:"id"`
			} `json:"availableModes"`
		} `json:"modes"`
	} `json:"session"`
	SessionID   string            `json:"sessionId"`
	StopReason  string            `json:"stopReason"`
	StopReasons []string          `json:"stopReasons"`
	Updates     []json.RawMessage `json:"updates"`
	Permissions []struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Name     string `json:"name"`
		} `json:"options"`
	} `json:"permissions"`
	SetMode json.RawMessage `json:"setMode"`
	Reads   []string        `json:"reads"`
	Writes  []struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	} `json:"writes"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	ExitCode int `json:"exitCode"`
}

// acpUpdate is one session/acpUpdate's fields the tests read.
type acpUpdate struct {
	Kind       string `json:"sessionUpdate"`
	ToolKind   string `json:"kind"`
	Status     string `json:"status"`
	ToolCallID string `json:"toolCallId"`
	Content    json.RawMessage
	Locations  []struct {
		Path string `json:"path"`
	} `json:"locations"`
}

func (s *acpSeen) updates(t *testing.T) []acpUpdate {
	var out []acpUpdate
	for _, raw := range s.Updates {
		var u acpUpdate
		if err := json.Unmarshal(raw, &u); err != nil {
			t.Fatal(err)
		}
		u.Content = nil
		var c struct {
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(raw, &c)
		u.Content = c.Content
		out = append(out, u)
	}
	return out
}

func (s *acpSeen) has(t *testing.T, kind, status string) bool {
	for _, u := range s.updates(t) {
		if u.Kind == kind && (status == "" || u.Status == status) {
			return true
		}
	}
	return false
}

// acpHarness runs client.mjs against one ask binary.
type acpHarness struct {
	t      *testing.T
	dir    string // testdata/acp
	bin    string
	home   string
	schema *acptest.Validator
}

func newACPHarness(t *testing.T) *acpHarness {
	t.Helper()
	if testing.Short() {
		t.Skip("slow under -short: builds ask and runs the ACP client under Node")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "acp")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@agentclientprotocol", "sdk")); err != nil {
		msg := "the ACP client is not installed: run `npm ci --prefix testdata/acp` (needs Node 20+)"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg + "; under CI scripts/test.sh installs it")
		}
		t.Skip(msg)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	bin := filepath.Join(t.TempDir(), "ask")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	v, err := acptest.New()
	if err != nil {
		t.Fatal(err)
	}
	return &acpHarness{t: t, dir: dir, bin: bin, home: t.TempDir(), schema: v}
}

// run runs one client session: env are client.mjs's settings, args ask's
// flags. Every line ask wrote must be a valid agent message.
func (h *acpHarness) run(fake *fakeprovider.Server, env map[string]string, args ...string) *acpSeen {
	h.t.Helper()
	raw := filepath.Join(h.t.TempDir(), "raw.jsonl")
	rawIn := raw + ".in"
	cmd := exec.Command("node", append([]string{filepath.Join(h.dir, "client.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+h.home, "XDG_STATE_HOME=", "XDG_CONFIG_HOME=", "ASK_BASE_URL="+fake.URL,
		"OPENAI_API_KEY=fake-test-not-a-real-key-0000", "ASK_BIN="+h.bin, "ACP_RAW="+raw, "ACP_RAW_IN="+rawIn)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		h.t.Fatalf("client.mjs: %v\nstderr: %s", err, stderr.String())
	}
	var seen acpSeen
	if err := json.Unmarshal(out, &seen); err != nil {
		h.t.Fatalf("client.mjs printed %q: %v\nstderr: %s", out, err, stderr.String())
	}
	if seen.ExitCode != 0 {
		h.t.Errorf("ask acp exited %d when stdin closed, want 0; stderr: %s", seen.ExitCode, stderr.String())
	}
	h.validate(raw, rawIn)
	return &seen
}

// validate checks every line ask wrote (raw) against the schema, its
// responses by the requests of the client's (rawIn) they answer.
func (h *acpHarness) validate(raw, rawIn string) {
	h.t.Helper()
	lines := func(path string) [][]byte {
		data, err := os.ReadFile(path)
		if err != nil {
			h.t.Fatal(err)
		}
		return bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	}
	for _, line := range lines(rawIn) {
		h.schema.ClientSent(line)
	}
	n := 0
	for _, line := range lines(raw) {
		n++
		if err := h.schema.Check(line); err != nil {
			h.t.Errorf("ask wrote a message the ACP schema refuses: %s\n%v", line, err)
		}
	}
	if n == 0 {
		h.t.Error("ask wrote nothing")
	}
}

func shellThenDone(command string) *fakeprovider.Server {
	return fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("call_1", "shell", `{"command":"`+command+`"}`)}},
		fakeprovider.Reply{Text: "Done."},
	)
}

func TestACPPromptApprovalAndLoad(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	fake := shellThenDone("echo from-the-tool")
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "run the tool", "ACP_ANSWER": "allow_once"}, "--workdir", wd)
	if seen.Error != nil {
		t.Fatalf("client error: %+v", seen.Error)
	}
	if seen.Initialize.ProtocolVersion != 1 || !seen.Initialize.AgentCapabilities.LoadSession {
		t.Errorf("initialize = %+v, want protocol 1 and loadSession", seen.Initialize)
	}
	if seen.StopReason != "end_turn" {
		t.Errorf("stopReason = %q, want end_turn", seen.StopReason)
	}
	if len(seen.Permissions) != 1 {
		t.Fatalf("permission requests = %d, want 1 (the shell call)", len(seen.Permissions))
	}
	var ids []string
	for _, o := range seen.Permissions[0].Options {
		ids = append(ids, o.OptionID)
	}
	if got := strings.Join(ids, ","); got != "allow_once,allow_always,reject_once" {
		t.Errorf("options = %s", got)
	}
	if name := seen.Permissions[0].Options[1].Name; !strings.Contains(name, "any echo") {
		t.Errorf("allow always says %q, want ask's always scope (any echo)", name)
	}
	var call, done, text bool
	for _, u := range seen.updates(t) {
		switch {
		case u.Kind == "tool_call" && u.ToolKind == "execute" && u.ToolCallID == "call_1":
			call = true
		case u.Kind == "tool_call_update" && u.Status == "completed" && strings.Contains(string(u.Content), "from-the-tool"):
			done = true
		case u.Kind == "agent_message_chunk":
			text = true
		}
	}
	if !call || !done || !text {
		t.Errorf("updates: tool_call %v, completed with output %v, message %v; want all\n%s", call, done, text, seen.Updates)
	}
	runs, _ := filepath.Glob(filepath.Join(h.home, ".local", "state", "ask", "runs", seen.SessionID+".jsonl"))
	if len(runs) != 1 {
		t.Fatalf("session %s is not kept as a run", seen.SessionID)
	}

	// Another process loads it: the conversation comes back as updates.
	loaded := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_SCENARIO": "load", "ACP_SESSION": seen.SessionID}, "--workdir", wd)
	if loaded.Error != nil {
		t.Fatalf("session/load: %+v", loaded.Error)
	}
	var user, tool, answer bool
	for _, u := range loaded.updates(t) {
		switch {
		case u.Kind == "user_message_chunk" && strings.Contains(string(u.Content), "run the tool"):
			user = true
		case u.Kind == "tool_call" && u.ToolCallID == "call_1":
			tool = true
		case u.Kind == "agent_message_chunk" && strings.Contains(string(u.Content), "Done."):
			answer = true
		}
	}
	if !user || !tool || !answer {
		t.Errorf("replayed: prompt %v, tool call %v, answer %v; want all\n%s", user, tool, answer, loaded.Updates)
	}
}

func TestACPRejectAndCancel(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	fake := shellThenDone("echo rejected")
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "go", "ACP_ANSWER": "reject_once"}, "--workdir", wd)
	if !seen.has(t, "tool_call_update", "failed") || seen.StopReason != "end_turn" {
		t.Errorf("rejected call: stop %q, updates %s; want the call failed and end_turn", seen.StopReason, seen.Updates)
	}
	if strings.Contains(fmt.Sprint(seen.Updates), "exit code") {
		t.Error("a rejected command ran")
	}

	fake2 := shellThenDone("echo cancelled")
	defer fake2.Close()
	seen = h.run(fake2, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "go", "ACP_SCENARIO": "cancel"}, "--workdir", wd)
	if seen.StopReason != "cancelled" {
		t.Errorf("cancelled turn: stopReason %q, want cancelled (error %+v)", seen.StopReason, seen.Error)
	}
}

func TestACPSessionNeverWidens(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	fake := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("call_w", "write_file", `{"path":"x.txt","content":"hi"}`)}},
		fakeprovider.Reply{Text: "Done."},
	)
	defer fake.Close()
	// --safe refuses the write, and the editor is never asked.
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "write"}, "--safe", "--workdir", wd)
	if len(seen.Permissions) != 0 {
		t.Errorf("a --safe refusal asked the editor %d times", len(seen.Permissions))
	}
	if seen.StopReason != "refusal" {
		t.Errorf("stopReason = %q, want refusal", seen.StopReason)
	}
	if _, err := os.Stat(filepath.Join(wd, "x.txt")); err == nil {
		t.Error("the write ran under --safe")
	}

	// A mode wider than --mode is refused; the modes offered are the
	// command line's and stricter.
	seen = h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_MODE": "agent"}, "--mode", "plan", "--workdir", wd)
	if !bytes.Contains(seen.SetMode, []byte("-32602")) {
		t.Errorf("set_mode agent under --mode plan: %s, want invalid params", seen.SetMode)
	}
	if n := len(seen.Session.Modes.Available); n != 2 || seen.Session.Modes.Current != "plan" {
		t.Errorf("modes = %+v, want ask and plan, plan current", seen.Session.Modes)
	}

	// A cwd outside --workdir is refused.
	outside := t.TempDir()
	seen = h.run(fake, map[string]string{"ACP_CWD": outside}, "--workdir", wd)
	if seen.Error == nil || seen.Error.Code != -32602 || !strings.Contains(seen.Error.Message, "outside") {
		t.Errorf("session/new outside --workdir: %+v, want invalid params naming it", seen.Error)
	}
}

// A session's MCP servers are declared to the model, unless --no-mcp:
// the command line wins.
func TestACPSessionMCPServers(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	url, hits := runtest.InProcessMCP(t)
	servers := `[{"type":"http","name":"fake","url":"` + url + `","headers":[]}]`

	fake := fakeprovider.Start(fakeprovider.Reply{Text: "hello"})
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "hi", "ACP_MCP": servers}, "--workdir", wd, "--no-mcp")
	if seen.Error != nil || seen.StopReason != "end_turn" {
		t.Fatalf("--no-mcp: %+v, stop %q", seen.Error, seen.StopReason)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("--no-mcp: the session's MCP server got %d requests, want none", n)
	}
	if reqs := fake.Requests(); len(reqs) != 1 || bytes.Contains(reqs[0], []byte("fake__echo")) {
		t.Errorf("--no-mcp: the model was offered the session's MCP tool")
	}

	fake2 := fakeprovider.Start(fakeprovider.Reply{Text: "hello"})
	defer fake2.Close()
	seen = h.run(fake2, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "hi", "ACP_MCP": servers}, "--workdir", wd)
	if seen.Error != nil || seen.StopReason != "end_turn" {
		t.Fatalf("with the session's server: %+v, stop %q", seen.Error, seen.StopReason)
	}
	if reqs := fake2.Requests(); len(reqs) != 1 || !bytes.Contains(reqs[0], []byte("fake__echo")) {
		t.Errorf("the session's MCP tool was not offered to the model")
	}
}

// With the client's fs methods, the file tools read and write through the
// editor, after ask has confined the path to the workdir; edits come back
// as diffs.
func TestACPEditorFiles(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	if err := os.WriteFile(filepath.Join(wd, "x.txt"), []byte("on disk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(filepath.Dir(wd), "outside.txt")
	fake := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("call_r", "read_file", `{"path":"x.txt"}`),
			fakeprovider.Call("call_o", "read_file", `{"path":"`+outside+`"}`),
			fakeprovider.Call("call_w", "write_file", `{"path":"new.txt","content":"from the model"}`),
		}},
		fakeprovider.Reply{Text: "Done."},
	)
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "files", "ACP_FS": "1"}, "--workdir", wd)
	if seen.Error != nil || seen.StopReason != "end_turn" {
		t.Fatalf("%+v, stop %q", seen.Error, seen.StopReason)
	}
	if len(seen.Reads) != 1 || seen.Reads[0] != filepath.Join(wd, "x.txt") {
		t.Errorf("the editor was asked to read %q, want only %s (never the path outside)", seen.Reads, filepath.Join(wd, "x.txt"))
	}
	if len(seen.Writes) != 1 || seen.Writes[0].Path != filepath.Join(wd, "new.txt") || seen.Writes[0].Content != "from the model" {
		t.Errorf("writes through the editor = %+v", seen.Writes)
	}
	if _, err := os.Stat(filepath.Join(wd, "new.txt")); err == nil {
		t.Error("write_file wrote the disk, not the editor")
	}
	var read, refused, diff bool
	for _, u := range seen.updates(t) {
		if u.Kind != "tool_call_update" {
			continue
		}
		c := string(u.Content)
		switch u.ToolCallID {
		case "call_r":
			read = read || (u.Status == "completed" && strings.Contains(c, "served by the editor"))
		case "call_o":
			refused = refused || u.Status == "failed"
		case "call_w":
			diff = diff || (u.Status == "completed" && strings.Contains(c, `"type":"diff"`) && strings.Contains(c, "from the model"))
		}
	}
	if !read || !refused || !diff {
		t.Errorf("read through the editor %v, outside refused %v, write shown as a diff %v; updates:\n%s", read, refused, diff, seen.Updates)
	}
	var locations bool
	for _, u := range seen.updates(t) {
		if u.Kind == "tool_call" && u.ToolCallID == "call_r" && len(u.Locations) == 1 && u.Locations[0].Path == filepath.Join(wd, "x.txt") {
			locations = true
		}
	}
	if !locations {
		t.Error("the read_file tool_call has no location naming the file")
	}
}

// The model's thinking, where the provider shows it, is an
// agent_thought_chunk before the answer.
func TestACPThoughts(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	body := `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","stop_reason":"end_turn",` +
		`"content":[{"type":"thinking","thinking":"weighing the two options","signature":"sig"},{"type":"text","text":"Option one."}],` +
		`"usage":{"input_tokens":10,"output_tokens":5}}`
	fake := fakeprovider.Start(fakeprovider.Reply{Body: body, ContentType: "application/json"})
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "choose", "ANTHROPIC_API_KEY": "fake-test-not-a-real-key-0000"},
		"--workdir", wd, "--provider", "anthropic", "--no-stream")
	if seen.Error != nil || seen.StopReason != "end_turn" {
		t.Fatalf("%+v, stop %q", seen.Error, seen.StopReason)
	}
	var order []string
	for _, u := range seen.updates(t) {
		switch {
		case u.Kind == "agent_thought_chunk" && strings.Contains(string(u.Content), "weighing the two options"):
			order = append(order, "thought")
		case u.Kind == "agent_message_chunk" && strings.Contains(string(u.Content), "Option one."):
			order = append(order, "answer")
		}
	}
	if strings.Join(order, ",") != "thought,answer" {
		t.Errorf("updates gave %v, want the thought then the answer:\n%s", order, seen.Updates)
	}
}

// "Allow always" approves what ask's always scope says for the rest of the
// session: the same command in a later turn is not asked again, another
// command is.
func TestACPAllowAlwaysScope(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	call := func(id, cmd string) fakeprovider.Reply {
		return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(id, "shell", `{"command":"`+cmd+`"}`)}}
	}
	fake := fakeprovider.Start(
		call("c1", "ls -a"), fakeprovider.Reply{Text: "ok"},
		call("c2", "ls -l"), fakeprovider.Reply{Text: "ok"},
		call("c3", "pwd"), fakeprovider.Reply{Text: "ok"},
	)
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPTS": `["a","b","c"]`, "ACP_ANSWER": "allow_always"}, "--workdir", wd)
	if seen.Error != nil || strings.Join(seen.StopReasons, ",") != "end_turn,end_turn,end_turn" {
		t.Fatalf("%+v, stops %v", seen.Error, seen.StopReasons)
	}
	if len(seen.Permissions) != 2 {
		t.Errorf("asked %d times, want 2: ls once (then always, any ls), pwd once", len(seen.Permissions))
	}
}

// A session's stricter mode is the policy of its next turn; a step limit
// ends a turn max_turn_requests; an image goes to the model with the
// prompt.
func TestACPModeLimitAndImage(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	fake := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("w1", "write_file", `{"path":"x.txt","content":"hi"}`)}},
		fakeprovider.Reply{Text: "could not"},
	)
	defer fake.Close()
	seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_MODE": "plan", "ACP_PROMPT": "write"}, "--workdir", wd)
	if seen.Error != nil || string(seen.SetMode) != `"ok"` {
		t.Fatalf("set_mode plan: %s, %+v", seen.SetMode, seen.Error)
	}
	if len(seen.Permissions) != 0 || !seen.has(t, "tool_call_update", "failed") {
		t.Errorf("plan mode: asked %d times, updates %s; want the write refused without asking", len(seen.Permissions), seen.Updates)
	}
	if _, err := os.Stat(filepath.Join(wd, "x.txt")); err == nil {
		t.Error("the write ran in plan mode")
	}

	loop := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("l1", "list_directory", `{"path":"."}`)}},
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("l2", "list_directory", `{"path":"sub"}`)}},
		fakeprovider.Reply{Text: "never reached"},
	)
	defer loop.Close()
	seen = h.run(loop, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "loop"}, "--workdir", wd, "--max-steps", "1")
	if seen.StopReason != "max_turn_requests" {
		t.Errorf("--max-steps 1: stopReason %q (%+v), want max_turn_requests", seen.StopReason, seen.Error)
	}

	img := fakeprovider.Start(fakeprovider.Reply{Text: "a red dot"})
	defer img.Close()
	png := "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
	prompt := `[[{"type":"text","text":"what is this?"},{"type":"image","mimeType":"image/png","data":"` + png + `"},` +
		`{"type":"resource","resource":{"uri":"file:///notes.txt","text":"embedded words"}}]]`
	seen = h.run(img, map[string]string{"ACP_CWD": wd, "ACP_PROMPTS": prompt}, "--workdir", wd)
	if seen.Error != nil || seen.StopReason != "end_turn" {
		t.Fatalf("image prompt: %+v, stop %q", seen.Error, seen.StopReason)
	}
	reqs := img.Requests()
	if len(reqs) != 1 || !bytes.Contains(reqs[0], []byte(png[:40])) || !bytes.Contains(reqs[0], []byte("embedded words")) {
		t.Errorf("the request lacks the image or the embedded resource")
	}
}

// The editor is asked only what the rules, hooks, --yes and --safe leave
// open: a deny rule, a hook's denial and --yes decide without it.
func TestACPRulesAndHooksDecideFirst(t *testing.T) {
	h := newACPHarness(t)
	wd := t.TempDir()
	for _, tc := range []struct {
		name   string
		hook   bool
		args   []string
		status string
	}{
		{name: "--yes", args: []string{"--yes"}, status: "completed"},
		{name: "a deny rule", args: []string{"--deny-tool", "shell"}, status: "failed"},
		{name: "a PreToolUse hook", hook: true, status: "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			config := filepath.Join(h.home, ".config", "ask", "config.json")
			os.Remove(config)
			if tc.hook {
				runtest.WriteConfig(t, h.home, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo blocked by the hook >&2; exit 2"}]}]}}`)
			}
			fake := shellThenDone("echo ruled")
			defer fake.Close()
			seen := h.run(fake, map[string]string{"ACP_CWD": wd, "ACP_PROMPT": "go"}, append([]string{"--workdir", wd}, tc.args...)...)
			if len(seen.Permissions) != 0 {
				t.Errorf("the editor was asked %d times", len(seen.Permissions))
			}
			if !seen.has(t, "tool_call_update", tc.status) {
				t.Errorf("the call did not end %s: %s", tc.status, seen.Updates)
			}
		})
	}
	os.Remove(filepath.Join(h.home, ".config", "ask", "config.json"))
}
