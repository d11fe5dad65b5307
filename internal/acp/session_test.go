package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/acp/acptest"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/run"
)

// TestValidatorRefuses: what the tests check ask's lines with does refuse
// malformed messages, so a line that passes means something.
func TestValidatorRefuses(t *testing.T) {
	t.Parallel()
	v, err := acptest.New()
	if err != nil {
		t.Fatal(err)
	}
	v.ClientSent([]byte(`{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{}}`))
	good := `{"jsonrpc":"2.0","id":1,"result":{"stopReason":"end_turn"}}`
	if err := v.Check([]byte(good)); err != nil {
		t.Fatalf("%s: %v", good, err)
	}
	for _, bad := range []string{
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","kind":"execute"}}}`,
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text"}}}}`,
		`{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c"},"options":[{"optionId":"a","name":"A","kind":"allow_sometimes"}]}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"stopReason":"done"}}`,
		`{"jsonrpc":"2.0","id":2,"result":{}}`,
		`{"jsonrpc":"2.0","method":"session/whatever","params":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"message":"no code"}}`,
	} {
		if v.Check([]byte(bad)) == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// client plays an editor in-process: it sends requests, answers ask's,
// and checks every line ask writes against the schema.
type client struct {
	t      *testing.T
	schema *acptest.Validator
	in     *io.PipeWriter
	out    *bufio.Scanner
	next   int
	answer string // the option chosen for each permission request

	mu          sync.Mutex
	updates     []json.RawMessage
	permissions int
}

func startClient(t *testing.T, cfg Config) (*client, func()) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), inR, outW, cfg)
		outW.Close()
	}()
	sc := bufio.NewScanner(outR)
	sc.Buffer(nil, 1<<24)
	v, err := acptest.New()
	if err != nil {
		t.Fatal(err)
	}
	c := &client{t: t, schema: v, in: inW, out: sc, answer: optionAllowOnce}
	return c, func() {
		inW.Close()
		for sc.Scan() {
			c.check(sc.Bytes())
		}
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("Serve did not return when its input closed")
		}
	}
}

func (c *client) check(line []byte) *message {
	c.t.Helper()
	if err := c.schema.Check(line); err != nil {
		c.t.Errorf("the ACP schema refuses %s:\n%v", line, err)
	}
	var m message
	json.Unmarshal(line, &m)
	return &m
}

// call sends a request and returns its response, handling what ask sends
// meanwhile.
func (c *client) call(method string, params any) *message {
	c.t.Helper()
	c.next++
	id := json.RawMessage(strings.TrimSpace(string(mustJSON(c.next))))
	c.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for c.out.Scan() {
		m := c.check(c.out.Bytes())
		switch {
		case m.Method == "session/update":
			var p struct {
				Update json.RawMessage `json:"update"`
			}
			json.Unmarshal(m.Params, &p)
			c.mu.Lock()
			c.updates = append(c.updates, p.Update)
			c.mu.Unlock()
		case m.Method == "session/request_permission":
			c.permissions++
			c.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": c.answer}}})
		case m.Method == "" && string(m.ID) == string(id):
			return m
		}
	}
	c.t.Fatalf("ask stopped before answering %s", method)
	return nil
}

func (c *client) send(v any) {
	c.t.Helper()
	line := mustJSON(v)
	c.schema.ClientSent(line)
	if _, err := c.in.Write(append(line, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// testConfig is ask acp's configuration for a fake provider's server,
// keeping runs under home.
func testConfig(t *testing.T, url, home, wd string, flags func(*run.Settings)) Config {
	t.Helper()
	vars := map[string]string{"HOME": home, "ASK_BASE_URL": url, "OPENAI_API_KEY": "fake-test-not-a-real-key-0000"}
	getenv := func(k string) string { return vars[k] }
	s, err := run.Resolve(run.Inputs{Getenv: getenv, Wd: wd, Config: run.LoadConfig(getenv, "")})
	if err != nil {
		t.Fatal(err)
	}
	if flags != nil {
		flags(&s)
	}
	store, err := history.Open(getenv)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Settings: s, Env: run.Env{Getenv: getenv, Wd: wd, Version: "test"}, History: &store, Version: "test"}
}

func TestSessionInProcess(t *testing.T) {
	t.Parallel()
	wd, home := t.TempDir(), t.TempDir()
	fake := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "shell", `{"command":"echo in-process"}`)}},
		fakeprovider.Reply{Text: "All done."},
	)
	defer fake.Close()
	c, stop := startClient(t, testConfig(t, fake.URL, home, wd, nil))
	init := c.call("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	if init.Error != nil || !bytes.Contains(init.Result, []byte(`"loadSession":true`)) {
		t.Fatalf("initialize: %s %v", init.Result, init.Error)
	}
	sess := c.call("session/new", map[string]any{"cwd": wd, "mcpServers": []any{}})
	var created struct {
		SessionID string `json:"sessionId"`
	}
	json.Unmarshal(sess.Result, &created)
	if sess.Error != nil || !history.IsID(created.SessionID) {
		t.Fatalf("session/new: %s %v", sess.Result, sess.Error)
	}
	resp := c.call("session/prompt", map[string]any{"sessionId": created.SessionID, "prompt": []any{map[string]string{"type": "text", "text": "go"}}})
	if resp.Error != nil || string(resp.Result) != `{"stopReason":"end_turn"}` {
		t.Errorf("session/prompt: %s %v", resp.Result, resp.Error)
	}
	if c.permissions != 1 {
		t.Errorf("asked %d times, want once", c.permissions)
	}
	bad := c.call("session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{}})
	if bad.Error == nil || bad.Error.Code != CodeInvalidParams {
		t.Errorf("a prompt to no session: %v, want invalid params", bad.Error)
	}
	stop()
	kept := filepath.Join(home, ".local", "state", "ask", "runs", created.SessionID+".jsonl")
	data, err := os.ReadFile(kept)
	if err != nil {
		t.Fatalf("the session is not kept as run %s: %v", created.SessionID, err)
	}
	if !bytes.Contains(data, []byte("in-process")) || !bytes.Contains(data, []byte(`"type":"run.finished"`)) {
		t.Error("the kept run lacks the tool's output or its end")
	}
	var kinds []string
	for _, u := range c.updates {
		var k struct {
			Kind string `json:"sessionUpdate"`
		}
		json.Unmarshal(u, &k)
		kinds = append(kinds, k.Kind)
	}
	if got := strings.Join(kinds, " "); !strings.Contains(got, "tool_call tool_call_update") || !strings.Contains(got, "agent_message_chunk") {
		t.Errorf("updates %s", got)
	}
}
