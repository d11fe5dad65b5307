package mcp

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ask-cli/ask/internal/tools"
)

// remoteServer is an SDK server with one read-only tool, echo.
func remoteServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "ask-remote-test", Version: "1"}, nil)
	type args struct {
		Message string `json:"message"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo", Description: "Echo the message", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *sdk.CallToolRequest, a args) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + a.Message}}}, nil, nil
		})
	return s
}

// serveRemote serves it on loopback over streamable HTTP or SSE; with
// token set, a request without "Authorization: Bearer TOKEN" gets 401.
func serveRemote(t *testing.T, sse bool, token string) *httptest.Server {
	t.Helper()
	s := remoteServer()
	var h http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil)
	if sse {
		h = sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return s }, nil)
	}
	inner := h
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		inner.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(h)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func startRemote(t *testing.T, opts Options, specs ...Server) (*Servers, error) {
	t.Helper()
	s, err := Start(context.Background(), specs, opts)
	if err == nil {
		t.Cleanup(s.Close)
	}
	return s, err
}

func TestRemoteTransports(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name      string
		sse       bool
		transport string
	}{
		{"streamable", false, ""},
		{"sse by fallback", true, ""},
		{"sse named", true, "sse"},
		{"http named", false, "http"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := serveRemote(t, tt.sse, "")
			s, err := startRemote(t, Options{}, Server{URL: srv.URL, Transport: tt.transport})
			if err != nil {
				t.Fatal(err)
			}
			echo := toolByName(t, s, "local__echo")
			if info := echo.Info(); info.Risk != tools.Read || info.RequiresApproval {
				t.Errorf("a read-only remote tool is %+v", info)
			}
			out, err := call(t, echo, `{"message":"hi"}`)
			if err != nil || out != "echo: hi" {
				t.Errorf("echo = %q, %v", out, err)
			}
		})
	}
}

// A streamable server named as SSE is an SSE failure, not a fallback.
func TestRemoteNamedTransportDoesNotFallBack(t *testing.T) {
	t.Parallel()
	srv := serveRemote(t, true, "")
	_, err := startRemote(t, Options{}, Server{URL: srv.URL, Transport: "http"})
	if err == nil || !strings.Contains(err.Error(), "streamable HTTP") {
		t.Errorf("err = %v", err)
	}
}

func TestRemoteAuth(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token-value-0123456789"
	srv := serveRemote(t, false, token)
	env := map[string]string{"GOOD": token, "BAD": "wrong-token-value-9876543210"}
	opts := Options{Getenv: func(k string) string { return env[k] }}
	header := func(v string) map[string]string { return map[string]string{"Authorization": v} }

	_, err := startRemote(t, opts, Server{URL: srv.URL})
	var auth *AuthError
	if !errors.As(err, &auth) || auth.Status != 401 || !strings.Contains(err.Error(), "Bearer ${TOKEN}") {
		t.Errorf("without a token: %v", err)
	}
	_, err = startRemote(t, opts, Server{URL: srv.URL, Headers: header("Bearer ${BAD}"), Origin: "config mcpServers.x"})
	if !errors.As(err, &auth) || err.Error() != "config mcpServers.x: refused with HTTP 401 Unauthorized: check the credentials its headers name (Authorization)" {
		t.Errorf("with a wrong token: %v", err)
	}
	_, err = startRemote(t, opts, Server{URL: srv.URL, Headers: header("Bearer ${UNSET}")})
	if err == nil || !strings.HasSuffix(err.Error(), "header Authorization: the environment variable UNSET is not set") {
		t.Errorf("with an unset variable: %v", err)
	}
	s, err := startRemote(t, opts, Server{URL: srv.URL, Headers: header("Bearer ${env:GOOD}")})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := call(t, toolByName(t, s, "local__echo"), `{"message":"in"}`); err != nil || out != "echo: in" {
		t.Errorf("echo = %q, %v", out, err)
	}
	for _, e := range []error{err, auth} {
		if e != nil && (strings.Contains(e.Error(), token) || strings.Contains(e.Error(), env["BAD"])) {
			t.Errorf("an error shows the token: %v", e)
		}
	}
}

// A server that goes away during the run makes its calls error results;
// the other server's tools still work.
func TestRemoteServerVanishes(t *testing.T) {
	t.Parallel()
	gone, stays := serveRemote(t, false, ""), serveRemote(t, false, "")
	s, err := startRemote(t, Options{}, Server{URL: gone.URL, Name: "gone"}, Server{URL: stays.URL, Name: "stays"})
	if err != nil {
		t.Fatal(err)
	}
	gone.CloseClientConnections()
	gone.Close()
	_, err = call(t, toolByName(t, s, "gone__echo"), `{"message":"x"}`)
	if err == nil || !strings.Contains(err.Error(), "gone__echo: the MCP server gone at "+gone.URL+" cannot be reached: ") || strings.Contains(err.Error(), "\n") {
		t.Errorf("call to the vanished server: %v", err)
	}
	if out, err := call(t, toolByName(t, s, "stays__echo"), `{"message":"y"}`); err != nil || out != "echo: y" {
		t.Errorf("the other server: %q, %v", out, err)
	}
}

// An optional server that cannot be reached is left out with a warning.
func TestRemoteOptionalServerLeftOut(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits out a server that never answers")
	}
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// It hangs up on every connection, and holds the port so that no
	// other test's server takes it.
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	dead := "http://" + l.Addr().String() + "/mcp"
	up := serveRemote(t, false, "")
	var warn strings.Builder
	s, err := startRemote(t, Options{Warn: &warn},
		Server{URL: dead, Name: "dead", Optional: true, Origin: "config mcpServers.dead"}, Server{URL: up.URL, Name: "up"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools()) != 1 || s.Tools()[0].Info().Name != "up__echo" {
		t.Errorf("tools %v", s.Tools())
	}
	w := warn.String()
	if !strings.HasPrefix(w, "ask: warning: config mcpServers.dead: cannot connect (streamable HTTP, tried 3 times): ") ||
		!strings.HasSuffix(w, "; going on without its tools\n") || strings.Count(w, "\n") != 1 {
		t.Errorf("warning %q", w)
	}
	// Not optional: an error.
	if _, err := startRemote(t, Options{}, Server{URL: dead}); err == nil || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("err = %v", err)
	}
}

// Without the network (--safe), a remote read-only tool needs approval
// like any exec tool, so that --safe refuses it.
func TestRemoteToolsWithoutNetwork(t *testing.T) {
	t.Parallel()
	srv := serveRemote(t, false, "")
	s, err := startRemote(t, Options{NoNetwork: true}, Server{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if info := toolByName(t, s, "local__echo").Info(); info.Risk != tools.Exec || !info.RequiresApproval || info.Sandboxed {
		t.Errorf("info %+v", info)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, err string }{
		{"https://mcp.example.com/mcp", ""},
		{"http://127.0.0.1:8080/sse?x=1", ""},
		{"https://user@example.com/mcp", ""},
		{"https://user:pw@example.com/mcp", "the URL holds a password"},
		{"ftp://example.com", "give an http:// or https:// URL"},
		{"https:///mcp", "give an http:// or https:// URL"},
		{"http://[::1", "not a URL"},
	} {
		err := checkURL(tt.url)
		if (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("checkURL(%q) = %v, want %q", tt.url, err, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

func TestURLBaseName(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"https://mcp.linear.app/sse":          "linear",
		"https://api.githubcopilot.com/mcp/":  "githubcopilot",
		"https://docs.mcp.cloudflare.com/sse": "cloudflare",
		"http://localhost:3001/mcp":           "local",
		"http://127.0.0.1:3001/mcp":           "local",
		"http://[::1]:3001/mcp":               "local",
		"https://example.co.uk/mcp":           "example",
		"https://mcp.com/":                    "remote",
	} {
		if got := urlBaseName(url); got != want {
			t.Errorf("urlBaseName(%q) = %q, want %q", url, got, want)
		}
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN": "abc", "OTHER": "x y"}
	getenv := func(k string) string { return env[k] }
	for _, tt := range []struct{ in, want, err string }{
		{"Bearer ${TOKEN}", "Bearer abc", ""},
		{"Bearer ${env:TOKEN}", "Bearer abc", ""},
		{"${TOKEN}-${OTHER}", "abc-x y", ""},
		{"no variables, $TOKEN stays", "no variables, $TOKEN stays", ""},
		{"Bearer ${MISSING}", "", "the environment variable MISSING is not set"},
		{"Bearer ${TOKEN", "", "a ${ without its closing }"},
		{"Bearer ${input:token}", "", "${input:token} does not name an environment variable"},
		{"${}", "", "${} does not name"},
	} {
		got, err := expand(tt.in, getenv)
		if got != tt.want || (err == nil) != (tt.err == "") || err != nil && !strings.Contains(err.Error(), tt.err) {
			t.Errorf("expand(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func FuzzExpand(f *testing.F) {
	for _, s := range []string{"Bearer ${TOKEN}", "${env:A}${B}", "${", "}${x}", "$${TOKEN}}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := expand(s, func(string) string { return "V" })
		// Every "${" starts a reference that is replaced, or an error.
		if err == nil && strings.Contains(got, "${") {
			t.Errorf("expand(%q) = %q left a reference", s, got)
		}
		if err != nil && got != "" {
			t.Errorf("expand(%q) failed (%v) but returned %q", s, err, got)
		}
	})
}

// Headers go to the server's own origin only: a redirect elsewhere does
// not carry the credential.
func TestRemoteHeadersStayWithTheServer(t *testing.T) {
	t.Parallel()
	seen := make(chan string, 10)
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("Authorization")
		http.Error(w, "nothing here", http.StatusNotFound)
	}))
	defer elsewhere.Close()
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	env := map[string]string{"TOKEN": "redirected-token-0123456789"}
	_, err := startRemote(t, Options{Getenv: func(k string) string { return env[k] }},
		Server{URL: redirecting.URL + "/mcp", Headers: map[string]string{"Authorization": "Bearer ${TOKEN}"}})
	if err == nil {
		t.Fatal("connected through a redirect to a server that is not one")
	}
	close(seen)
	n := 0
	for auth := range seen {
		n++
		if auth != "" {
			t.Errorf("the redirect target got Authorization %q", auth)
		}
	}
	if n == 0 {
		t.Error("the redirect was not followed, so the test shows nothing")
	}
}

// A server that takes the connection and never answers ends the start at
// the start timeout, with one line saying so.
func TestRemoteStartTimeout(t *testing.T) {
	t.Parallel()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server sees the client hang up
		<-r.Context().Done()
	}))
	defer silent.Close()
	_, err := startRemote(t, Options{StartTimeout: 300 * time.Millisecond}, Server{URL: silent.URL + "/mcp"})
	if err == nil || err.Error() != `MCP server "`+silent.URL+`/mcp": no answer within 300ms` {
		t.Errorf("err = %v", err)
	}
}
