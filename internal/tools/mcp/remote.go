package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"mvdan.cc/sh/v3/syntax"

	"github.com/ask-cli/ask/internal/mcpauth"
)

// Remote servers. ask is their client, as it is the model provider's: the
// sandbox confines the processes a run starts, not ask itself, so a
// sandboxed run still connects (see Options.NoNetwork for --safe).
//
// Choices:
//   - streamable HTTP first; a 4xx answer to the first POST (other than
//     401 and 403) means an older server, which is tried over SSE at the
//     same URL, as the MCP specification's backwards-compatibility section
//     describes;
//   - a refused connection, a 5xx or a 429 is tried again, twice, a second
//     apart, within the start timeout;
//   - 401 and 403 are an AuthError and are not retried;
//   - header values are expanded from the environment when the server is
//     reached, and never appear in an error: errors name the variable.

const (
	connectAttempts = 3
	retryPause      = time.Second
)

// AuthError is a remote server that refused the request's credentials.
type AuthError struct {
	Origin string
	Status int
	Hint   string // which header or variable to look at
	// Login is set when the server wants a sign-in (ask mcp login).
	Login *mcpauth.LoginNeeded
}

func (e *AuthError) Error() string {
	return fmt.Sprintf("%s: refused with HTTP %d %s%s", e.Origin, e.Status, http.StatusText(e.Status), e.Hint)
}

// checkURL accepts absolute http and https URLs without a password: a
// credential belongs in a header whose value names a variable, not in a
// URL that is recorded in transcripts.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("not a URL: %v", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return errors.New("give an http:// or https:// URL")
	}
	if _, set := u.User.Password(); set {
		return errors.New("the URL holds a password: send the credential in a header whose value names an environment variable, such as Authorization: Bearer ${TOKEN}")
	}
	return nil
}

// CheckServer checks a remote server before anything is sent: its URL,
// and that each header value's ${...} references are well formed (their
// variables are read when the server is reached).
func CheckServer(s Server) error {
	if err := checkURL(s.URL); err != nil {
		return err
	}
	_, err := expandHeaders(s.Headers, func(string) string { return "set" })
	return err
}

// IsURL tells whether an --mcp value is a URL rather than a command.
func IsURL(s string) bool {
	s = strings.ToLower(strings.TrimSpace(s))
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// urlBaseName names a remote server after its host: mcp.linear.app is
// linear, api.githubcopilot.com is githubcopilot; a local address is
// "local".
func urlBaseName(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "remote"
	}
	host := u.Hostname()
	if host == "localhost" || net.ParseIP(host) != nil {
		return "local"
	}
	labels := strings.Split(host, ".")
	if len(labels) > 1 {
		labels = labels[:len(labels)-1] // the top-level domain
	}
	for i := len(labels) - 1; i >= 0; i-- {
		if l := labels[i]; l != "mcp" && l != "api" && l != "www" && l != "co" && l != "com" {
			return l
		}
	}
	return "remote"
}

// expand replaces ${NAME} and ${env:NAME} (the form VS Code and Cursor
// write) with the variable's value. An unset or empty variable is an
// error naming it; the value never appears in an error.
func expand(s string, getenv func(string) string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			return "", errors.New("a ${ without its closing }")
		}
		name := strings.TrimPrefix(s[i+2:i+end], "env:")
		if !syntax.ValidName(name) {
			return "", fmt.Errorf("${%s} does not name an environment variable", s[i+2:i+end])
		}
		v := getenv(name)
		if v == "" {
			return "", fmt.Errorf("the environment variable %s is not set", name)
		}
		b.WriteString(s[:i])
		b.WriteString(v)
		s = s[i+end+1:]
	}
}

// expandEnv turns a config file's env object into NAME=value entries.
func expandEnv(env map[string]string, getenv func(string) string) ([]string, error) {
	var out []string
	for _, k := range sortedKeys(env) {
		if !syntax.ValidName(k) {
			return nil, fmt.Errorf("env: %q is not a variable name", k)
		}
		v, err := expand(env[k], getenv)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// expandHeaders expands a server's header values.
func expandHeaders(headers map[string]string, getenv func(string) string) (http.Header, error) {
	h := http.Header{}
	for _, k := range sortedKeys(headers) {
		v, err := expand(headers[k], getenv)
		if err != nil {
			return nil, fmt.Errorf("header %s: %v", k, err)
		}
		h.Set(k, v)
	}
	return h, nil
}

// headerTransport adds the server's headers to every request to the
// server's own origin (never to where a redirect leads: the headers may
// carry its credentials) and keeps the status of the last answer that was
// not a success, so that a failed handshake can be told apart: wrong
// credentials, an older server, a server that is down.
type headerTransport struct {
	base    http.RoundTripper
	origin  *url.URL
	headers http.Header
	status  atomic.Int32
}

func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme == t.origin.Scheme && req.URL.Host == t.origin.Host {
		req = req.Clone(req.Context())
		for k, v := range t.headers {
			req.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode >= 300 {
		t.status.Store(int32(resp.StatusCode))
	}
	return resp, err
}

func (t *headerTransport) lastStatus() int { return int(t.status.Swap(0)) }

// connectRemote connects to a remote server and lists its tools.
func connectRemote(ctx context.Context, spec Server, name string, opts Options) (*server, []*sdk.Tool, error) {
	origin := spec.origin()
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: %s", origin, fmt.Sprintf(format, args...))
	}
	headers, err := expandHeaders(spec.Headers, opts.getenv())
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	base := opts.HTTP
	if base == nil {
		base = http.DefaultTransport.(*http.Transport).Clone()
	}
	endpoint, err := url.Parse(spec.URL)
	if err != nil {
		return nil, nil, fail("%v", err)
	}
	// No overall timeout: a session holds a stream open for its lifetime.
	ht := &headerTransport{base: base, origin: endpoint, headers: headers}
	client := &http.Client{Transport: ht}
	// The sign-in's own requests (metadata, token refresh) go to other
	// origins, without the server's headers.
	signIn, err := oauthHandler(spec, opts, &http.Client{Transport: base, Timeout: 30 * time.Second})
	if err != nil {
		return nil, nil, fail("%v", err)
	}

	startCtx, cancel := context.WithTimeoutCause(ctx, opts.StartTimeout,
		fmt.Errorf("no answer within %s", opts.StartTimeout))
	defer cancel()
	sdkClient := sdk.NewClient(&sdk.Implementation{Name: "ask", Version: opts.Version},
		clientOptions(name, opts))
	// The SSE transport keeps the context it connects with for its event
	// stream, so the session gets one that lasts as long as the run, ended
	// early only if the start times out.
	sessionCtx, endSession := context.WithCancel(ctx)
	connect := func(sse bool) (*sdk.ClientSession, error) {
		var t sdk.Transport = &sdk.StreamableClientTransport{Endpoint: spec.URL, HTTPClient: client, MaxRetries: 2, OAuthHandler: signIn}
		if sse {
			t = &sdk.SSEClientTransport{Endpoint: spec.URL, HTTPClient: client}
		}
		return sdkClient.Connect(sessionCtx, t, &sdk.ClientSessionOptions{ProtocolVersion: protocolVersion})
	}
	stopTimer := context.AfterFunc(startCtx, endSession)
	ok := false
	defer func() {
		if !ok {
			endSession()
		}
	}()
	authHint := func() string {
		if len(spec.Headers) == 0 {
			return ": the server wants credentials; sign in with ask mcp login " + cmp.Or(spec.Name, spec.URL) +
				" if it takes OAuth, or send a token in a header whose value names an environment variable (Authorization: Bearer ${TOKEN})"
		}
		return ": check the credentials its headers name (" + strings.Join(sortedKeys(spec.Headers), ", ") + ")"
	}

	sse := spec.Transport == "sse"
	var session *sdk.ClientSession
	for attempt := 1; ; attempt++ {
		session, err = connect(sse)
		if err == nil {
			break
		}
		status := ht.lastStatus()
		var login *mcpauth.LoginNeeded
		switch {
		case errors.As(err, &login):
			return nil, nil, &AuthError{Origin: origin, Status: cmp.Or(status, http.StatusUnauthorized), Hint: ": " + login.Error(), Login: login}
		case ctx.Err() != nil:
			return nil, nil, fmt.Errorf("%s: %w", origin, context.Cause(ctx))
		case startCtx.Err() != nil:
			return nil, nil, fail("no answer within %s", opts.StartTimeout)
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return nil, nil, &AuthError{Origin: origin, Status: status, Hint: authHint()}
		case !sse && spec.Transport == "" && status >= 400 && status < 500 && status != http.StatusTooManyRequests:
			sse = true // an older server: its SSE endpoint is tried at once
			if opts.Stderr != nil {
				fmt.Fprintf(opts.Stderr, "mcp %s: streamable HTTP answered HTTP %d; trying SSE\n", name, status)
			}
			continue
		}
		transient := status == 0 || status == http.StatusTooManyRequests || status >= 500
		if !transient || attempt == connectAttempts {
			tried := transportName(sse)
			if attempt > 1 {
				tried += fmt.Sprintf(", tried %d times", attempt)
			}
			if status != 0 {
				return nil, nil, fail("HTTP %d %s (%s)", status, http.StatusText(status), tried)
			}
			return nil, nil, fail("cannot connect (%s): %s", tried, oneLine(err))
		}
		select {
		case <-time.After(retryPause):
		case <-startCtx.Done():
		}
	}
	srv := &server{name: name, session: session, stderr: newTailWriter(name, nil), remote: spec.URL, warn: opts.Warn}
	srv.endSession = endSession

	listed, err := srv.listTools(ctx, startCtx, origin)
	if err != nil {
		return nil, nil, err
	}
	if !stopTimer() { // the start timed out just now
		srv.stop()
		return nil, nil, fail("it did not list its tools within %s", opts.StartTimeout)
	}
	ok = true
	return srv, listed, nil
}

// oauthHandler is how a remote server is signed in to: not at all when
// its headers carry an Authorization (a token from a variable, as CI
// gives it); else with the config's oauth client, or a sign-in that
// `ask mcp login` kept; nil when the server wants none of that.
func oauthHandler(spec Server, opts Options, httpc *http.Client) (auth.OAuthHandler, error) {
	for k := range spec.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil, nil
		}
	}
	server, err := mcpauth.Canonical(spec.URL)
	if err != nil {
		return nil, err
	}
	var client mcpauth.Client
	if spec.OAuth != nil {
		if client, err = ExpandOAuth(*spec.OAuth, opts.getenv()); err != nil {
			return nil, err
		}
	}
	return mcpauth.ForRun(opts.Auth, server, cmp.Or(spec.Name, spec.URL), client, httpc)
}

// ExpandOAuth is c with the variables its secrets and key path name
// (${VAR}) put in.
func ExpandOAuth(c mcpauth.Client, getenv func(string) string) (mcpauth.Client, error) {
	for _, f := range []struct {
		key string
		v   *string
	}{{"client_secret", &c.ClientSecret}, {"private_key_file", &c.PrivateKeyFile}, {"idp_client_secret", &c.IdPClientSecret}} {
		v, err := expand(*f.v, getenv)
		if err != nil {
			return c, fmt.Errorf("oauth %s: %v", f.key, err)
		}
		*f.v = v
	}
	return c, nil
}

func transportName(sse bool) string {
	if sse {
		return "SSE"
	}
	return "streamable HTTP"
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
