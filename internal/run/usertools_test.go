package run

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
)

// inProcessMCP serves an SDK server with a read-only echo tool over
// streamable HTTP on loopback, counting the requests it gets, so that the
// trust rules are tested without Node.
func inProcessMCP(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "ask-cmd-test", Version: "1"}, nil)
	type args struct {
		Message string `json:"message"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the message", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Message}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	var hits atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp", &hits
}

// A URL that a transcript names is gated as a command is: -c goes on
// without it unless the flag or a yes gives it again. (That replay
// connects only with --yes is cmd/ask's TestMCPRemoteReplayNeedsYes.)
func TestMCPRemoteFromTranscriptIsGated(t *testing.T) {
	t.Parallel()
	endpoint, hits := inProcessMCP(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "echoed"},
		fakeprovider.Reply{Text: "again"})
	defer srv.Close()
	w := newWorld(t, srv)
	if r := w.ask("echo", "mcp", endpoint); r.code != fault.ExitOK || r.answer() != "echoed\n" {
		t.Fatalf("first run: exit %d, answer %q; stderr %s", r.code, r.answer(), r.stderr)
	}
	before := hits.Load()

	r := w.ask("again", "continue", true)
	if r.code != fault.ExitOK || !strings.Contains(r.stderr, "give --mcp "+endpoint) {
		t.Errorf("-c: exit %d, stderr %s", r.code, r.stderr)
	}
	if hits.Load() != before {
		t.Error("-c connected to the transcript's server without being told to")
	}
	if declared := declaredNames(srv.Requests()[2]); strings.Contains(declared, "local__") {
		t.Errorf("-c declared %s", declared)
	}
}

// Under --safe (no network) a remote server is not contacted at all (L4:
// its token would leave the machine): its tools are not offered, a call to
// one fails, and stderr says why. --allow-host naming it lets it be.
func TestMCPRemoteRefusedUnderSafe(t *testing.T) {
	t.Parallel()
	endpoint, hits := inProcessMCP(t)
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	r := newWorld(t, srv).ask("echo", "safe", true, "mcp", endpoint)
	if hits.Load() != 0 || !strings.Contains(r.stderr, "not contacted under --safe") {
		t.Fatalf("exit %d, %d requests to the server; stderr %s", r.code, hits.Load(), r.stderr)
	}
	if c := callsByID(r.summary().ToolCalls)["echo"]; !c.IsError || strings.Contains(c.Content, "echo: hi") {
		t.Errorf("call %+v", c)
	}
}

// A remote server that is gone when a tool is called does not stop the
// run: the call is an error result the model reads, and it answers.
func TestMCPRemoteServerGoneMidRun(t *testing.T) {
	t.Parallel()
	endpoint, _ := inProcessMCP(t)
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	var gone atomic.Bool
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.FlushInterval = -1
	front := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gone.Load() {
			// Hang up, as a server that has died does.
			if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
				c.Close()
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	front.Listener = l
	front.Start()
	defer front.Close()

	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("echo", "local__echo", `{"message":"hi"}`)}},
		fakeprovider.Reply{Text: "the server is gone"})
	defer srv.Close()
	// Once the model is asked, the MCP server is gone.
	provURL, _ := url.Parse(srv.URL)
	toProvider := httputil.NewSingleHostReverseProxy(provURL)
	toProvider.FlushInterval = -1
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gone.Store(true)
		toProvider.ServeHTTP(w, r)
	}))
	defer model.Close()
	w := newWorld(t, nil).with("ASK_PROVIDER", "openai", "ASK_BASE_URL", model.URL, "OPENAI_API_KEY", "fake-test-not-a-real-key-0000")
	r := w.ask("echo", "mcp", front.URL+target.Path)
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	got := r.summary()
	c := callsByID(got.ToolCalls)["echo"]
	if got.Answer != "the server is gone" || !c.IsError || !strings.Contains(c.Content, "local__echo: the MCP server local at "+front.URL+target.Path+" cannot be reached: ") {
		t.Errorf("answer %q, call %+v", got.Answer, c)
	}
}

func callsByID(calls []loop.Call) map[string]loop.Call {
	out := map[string]loop.Call{}
	for _, c := range calls {
		out[c.ID] = c
	}
	return out
}

// L5: a remote MCP server that echoes the token its header carried handed
// it to the model, the provider and the transcript. Header values as sent
// are scrubbed from every tool result, bare and as the Bearer credential.
func TestMCPEchoedTokenIsScrubbed(t *testing.T) {
	t.Parallel()
	s := sdk.NewServer(&sdk.Implementation{Name: "echo-auth", Version: "1"}, nil)
	sdk.AddTool(s, &sdk.Tool{Name: "whoami", Description: "Say who the caller is", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
			auth := ""
			if req.Extra != nil {
				auth = req.Extra.Header.Get("Authorization")
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you sent " + auth}}}, nil, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	remote := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	remote.Listener = l
	remote.Start()
	defer remote.Close()
	const token = "mcp-echoed-token-0123456789"
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("who", "local__whoami", `{}`)}},
		fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	r := newWorld(t, srv).with("MCP_TOKEN", token).ask("who am I", "mcp", remote.URL+"/mcp", "mcp-header", "Authorization: Bearer ${MCP_TOKEN}")
	if r.code != fault.ExitOK {
		t.Fatalf("exit %d; stderr %s", r.code, r.stderr)
	}
	c := callsByID(r.summary().ToolCalls)["who"]
	if !strings.Contains(c.Content, "you sent") {
		t.Fatalf("the tool did not run: %+v", c)
	}
	out, _ := json.Marshal(r.summary())
	if bytes.Contains(out, []byte(token)) || bytes.Contains(r.transcript, []byte(token)) || bytes.Contains(srv.Requests()[len(srv.Requests())-1], []byte(token)) {
		t.Errorf("the echoed MCP token reached the model or the output: %s", c.Content)
	}
}
