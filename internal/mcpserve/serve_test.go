package mcpserve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
)

// serving is an `ask mcp serve` driven by an MCP client (the SDK's) over
// in-memory transports, against a fake model.
type serving struct {
	t        *testing.T
	wd       string
	vars     map[string]string
	client   *sdk.ClientSession
	progress chan *sdk.ProgressNotificationParams
}

// serve starts a server whose command line gave flags (name, value
// pairs), with model as the provider.
func serve(t *testing.T, model *fakeprovider.Server, flags ...any) *serving {
	t.Helper()
	return serveWith(t, model, nil, flags...)
}

// serveWith is serve with setup changing its working directory or its
// variables (a state or config directory) before the server starts.
func serveWith(t *testing.T, model *fakeprovider.Server, setup func(*serving), flags ...any) *serving {
	t.Helper()
	s := &serving{t: t, wd: t.TempDir(), progress: make(chan *sdk.ProgressNotificationParams, 100),
		vars: map[string]string{"XDG_STATE_HOME": t.TempDir(), "HOME": t.TempDir(),
			"ASK_PROVIDER": "openai", "ASK_BASE_URL": model.URL, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}}
	if setup != nil {
		setup(s)
	}
	getenv := func(k string) string { return s.vars[k] }
	var in run.Inputs
	in.Getenv, in.Wd, in.Config = getenv, s.wd, run.LoadConfig(getenv, "")
	for i := 0; i+1 < len(flags); i += 2 {
		name := flags[i].(string)
		if err := in.Flags.Values.Set(name, flags[i+1], "flag --"+name); err != nil {
			t.Fatal(err)
		}
	}
	store, err := history.Open(getenv)
	if err != nil {
		t.Fatal(err)
	}
	srv := &Server{Inputs: in, History: &store, Version: "test",
		Env: run.Env{Getenv: getenv, Environ: func() []string { return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.vars["HOME"]} }, Wd: s.wd}}
	mcpSrv, err := srv.New()
	if err != nil {
		t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go mcpSrv.Run(ctx, st)
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) { s.progress <- r.Params },
	})
	s.client, err = client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.client.Close() })
	return s
}

func (s *serving) call(ctx context.Context, tool string, args map[string]any) *sdk.CallToolResult {
	s.t.Helper()
	res, err := s.client.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args, Meta: sdk.Meta{"progressToken": "p1"}})
	if err != nil {
		s.t.Fatalf("%s: %v", tool, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func outcome(t *testing.T, res *sdk.CallToolResult) Outcome {
	t.Helper()
	data, _ := json.Marshal(res.StructuredContent)
	var o Outcome
	if err := json.Unmarshal(data, &o); err != nil {
		t.Fatalf("structured content %s: %v", data, err)
	}
	return o
}

func TestServeLists(t *testing.T) {
	t.Parallel()
	s := serve(t, fakeprovider.Start())
	list, err := s.client.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
		if tool.InputSchema == nil || tool.OutputSchema == nil {
			t.Errorf("%s: no input or output schema", tool.Name)
		}
	}
	if strings.Join(names, " ") != "ask ask_reply" {
		t.Errorf("tools = %v, want ask and ask_reply", names)
	}
}

// A whole run through the server: the model calls a tool that needs
// approval, the serve command's --allow-tool allows it, the client hears
// of each step, the answer comes back, the run is kept, and ask_reply
// carries it on with the conversation.
func TestServeRunsAndRepliesUnderTheServersPolicy(t *testing.T) {
	t.Parallel()
	model := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo served > out.txt"}`)}},
		fakeprovider.Reply{Text: "Wrote out.txt."},
		fakeprovider.Reply{Text: "It says served."},
	)
	s := serve(t, model, "allow-tool", []string{"shell:echo*"})
	res := s.call(context.Background(), "ask", map[string]any{"prompt": "write out.txt"})
	if res.IsError || text(res) != "Wrote out.txt." {
		t.Fatalf("ask = %q (error %v)", text(res), res.IsError)
	}
	if data, _ := os.ReadFile(filepath.Join(s.wd, "out.txt")); string(data) != "served\n" {
		t.Errorf("out.txt = %q: the allowed command did not run", data)
	}
	o := outcome(t, res)
	if o.Status != "completed" || !history.IsID(o.RunID) || o.Steps != 2 {
		t.Errorf("outcome = %+v", o)
	}
	if _, err := os.Stat(filepath.Join(s.vars["XDG_STATE_HOME"], "ask", "runs", o.RunID+".jsonl")); err != nil {
		t.Errorf("the run was not kept: %v", err)
	}
	got := 0
	for len(s.progress) > 0 {
		p := <-s.progress
		if p.ProgressToken != "p1" || p.Message == "" {
			t.Errorf("progress %+v", p)
		}
		got++
	}
	if got < 3 { // two steps and a tool call
		t.Errorf("%d progress notifications, want one per step and per tool call", got)
	}

	res = s.call(context.Background(), "ask_reply", map[string]any{"run_id": o.RunID, "prompt": "what does it say?"})
	if res.IsError || text(res) != "It says served." {
		t.Fatalf("ask_reply = %q (error %v)", text(res), res.IsError)
	}
	reqs := model.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(string(last), "write out.txt") || !strings.Contains(string(last), "what does it say?") {
		t.Errorf("the reply's request does not carry the conversation on: %s", last)
	}
}

// Without an allow in the serve command's flags, a call that needs
// approval is denied: the client cannot approve it, nobody is asked.
func TestServeDeniesWhatItsFlagsDoNotAllow(t *testing.T) {
	t.Parallel()
	model := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo no > out.txt"}`)}},
		fakeprovider.Reply{Text: "Could not."},
	)
	s := serve(t, model)
	res := s.call(context.Background(), "ask", map[string]any{"prompt": "write out.txt", "mode": "agent"})
	if _, err := os.Stat(filepath.Join(s.wd, "out.txt")); err == nil {
		t.Fatal("a command that needs approval ran with nobody to approve it")
	}
	if !strings.Contains(string(model.Requests()[1]), "denied") {
		t.Errorf("the model was not told of the denial: %s", model.Requests()[1])
	}
	_ = res
}

// A client's arguments only narrow: a mode wider than the serve
// command's, or a directory outside its working directory, is refused.
func TestServeClientArgumentsOnlyNarrow(t *testing.T) {
	t.Parallel()
	model := fakeprovider.Start(fakeprovider.Reply{Text: "Looked."})
	s := serve(t, model, "mode", "plan")
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(s.wd, "link"))
	os.Mkdir(filepath.Join(s.wd, "sub"), 0o755)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"prompt": "x", "mode": "agent"}, `"mode" would widen what the model may do (agent is less strict than plan)`},
		{map[string]any{"prompt": "x", "mode": "yolo"}, `choose ask, plan or agent`},
		{map[string]any{"prompt": "x", "workdir": outside}, "is outside this server's working directory"},
		{map[string]any{"prompt": "x", "workdir": "../"}, "is outside this server's working directory"},
		{map[string]any{"prompt": "x", "workdir": "link"}, "is outside this server's working directory"},
		{map[string]any{"prompt": "x", "yes": true}, "unexpected additional properties"},
	} {
		res, err := s.client.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask", Arguments: tc.args})
		msg := ""
		if err != nil {
			msg = err.Error()
		} else if res.IsError {
			msg = text(res)
		}
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%v: got %q, want it refused with %q", tc.args, msg, tc.want)
		}
	}
	if len(model.Requests()) != 0 {
		t.Fatalf("a refused call reached the model")
	}
	res := s.call(context.Background(), "ask", map[string]any{"prompt": "look", "mode": "ask", "workdir": "sub"})
	if res.IsError {
		t.Fatalf("a narrower mode and a directory inside were refused: %s", text(res))
	}
	entries, err := s.store().List()
	if err != nil || len(entries) != 1 || entries[0].Workdir != filepath.Join(s.realWd(), "sub") {
		t.Errorf("kept runs = %+v (%v), want one in %s", entries, err, filepath.Join(s.wd, "sub"))
	}
}

func (s *serving) store() history.Store {
	store, err := history.Open(func(k string) string { return s.vars[k] })
	if err != nil {
		s.t.Fatal(err)
	}
	return store
}

func (s *serving) realWd() string {
	real, err := filepath.EvalSymlinks(s.wd)
	if err != nil {
		s.t.Fatal(err)
	}
	return real
}

// notifications/cancelled stops the run: the model's slow reply is
// abandoned, and the call ends at once.
func TestServeCancelStopsTheRun(t *testing.T) {
	t.Parallel()
	var once sync.Once
	release := make(chan struct{})
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	model := fakeprovider.StartFunc(func([]byte) fakeprovider.Reply {
		<-release
		return fakeprovider.Reply{Text: "too late"}
	})
	s := serve(t, model)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := s.client.CallTool(ctx, &sdk.CallToolParams{Name: "ask", Arguments: map[string]any{"prompt": "slow"}})
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(model.Requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel() // the SDK's client sends notifications/cancelled
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not end")
	}
	// The run ends interrupted, and is kept.
	deadline = time.Now().Add(10 * time.Second)
	for {
		entries, _ := os.ReadDir(filepath.Join(s.vars["XDG_STATE_HOME"], "ask", "runs"))
		for _, e := range entries {
			data, _ := os.ReadFile(filepath.Join(s.vars["XDG_STATE_HOME"], "ask", "runs", e.Name()))
			if strings.Contains(string(data), `"status":"interrupted"`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no kept run ended interrupted")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCheckListen(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080": true, "[::1]:0": true, "localhost:9": true,
		"0.0.0.0:8080": false, ":8080": false, "192.168.1.2:80": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if err := CheckListen(addr); (err == nil) != ok {
			t.Errorf("CheckListen(%q) = %v, want ok %v", addr, err, ok)
		}
	}
}
