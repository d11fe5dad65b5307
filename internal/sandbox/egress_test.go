package sandbox

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

type connectEvent struct {
	host    string
	port    int
	allowed bool
}

// egressWorld is a TLS server that answers for example.com (httptest's
// certificate names it), a proxy that allows it and maps every name to
// that server, and the events the proxy told.
type egressWorld struct {
	world
	sb     *Sandbox
	caFile string
	mu     sync.Mutex
	events []connectEvent
}

func newEgressWorld(t *testing.T, hosts ...string) *egressWorld {
	t.Helper()
	w := &egressWorld{world: newWorld(t)}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(rw, "HELLO-FROM %s", r.Host)
	}))
	t.Cleanup(srv.Close)
	w.caFile = filepath.Join(w.workdir, "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(w.caFile, pemBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := srv.Listener.Addr().String()
	proxy := &Proxy{
		Hosts: hosts,
		OnConnect: func(host string, port int, allowed bool) {
			w.mu.Lock()
			defer w.mu.Unlock()
			w.events = append(w.events, connectEvent{host, port, allowed})
		},
		// The test's resolver and dialer: every name is a public address,
		// which is the local TLS server.
		Resolve: publicResolver,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
	}
	t.Cleanup(proxy.Close)
	p := w.policy(ReadOnly, false)
	w.sb = &Sandbox{Policy: p, Support: requireSupport(t, p), Proxy: proxy}
	return w
}

// publicResolver resolves every name to a public address (one of the
// documentation's), which the tests' Dial maps to their own servers.
func publicResolver(context.Context, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("203.0.113.7")}, nil
}

func (w *egressWorld) seen() []connectEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]connectEvent(nil), w.events...)
}

// httpsGet fetches url from inside the sandbox with the test binary itself,
// a Go HTTPS client that goes through $HTTPS_PROXY as any would.
func httpsGet(caFile, url string) string {
	self, _ := os.Executable()
	return fmt.Sprintf("ASK_SANDBOX_TEST_GET=%s ASK_SANDBOX_TEST_CA=%s %s -test.run=TestGetHelper", url, caFile, self)
}

// TestGetHelper is not a test: it is the client httpsGet runs.
func TestGetHelper(t *testing.T) {
	url := os.Getenv("ASK_SANDBOX_TEST_GET")
	if url == "" {
		t.Skip("run by the sandbox tests as a helper")
	}
	ca, err := os.ReadFile(os.Getenv("ASK_SANDBOX_TEST_CA"))
	if err != nil {
		fmt.Println("GET FAILED:", err)
		os.Exit(3)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyFromEnvironment,
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Println("GET FAILED:", err)
		os.Exit(3)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Printf("STATUS %d %s\n", resp.StatusCode, body)
}

// --allow-host: a real HTTPS client inside the sandbox reaches the allowed
// name through ask's proxy, and nothing else: another name, another port,
// the address itself and a way around the proxy are refused, and each
// connection asked for is told, allowed or not.
func TestAllowHostThroughTheProxy(t *testing.T) {
	t.Parallel()
	w := newEgressWorld(t, "example.com")
	type client struct {
		name string
		line func(url string) string
	}
	clients := []client{{"go", func(url string) string { return httpsGet(w.caFile, url) }}}
	if _, err := exec.LookPath("curl"); err == nil {
		clients = append(clients, client{"curl", func(url string) string {
			return "curl -sS --max-time 20 --cacert " + w.caFile + " " + url + " && echo"
		}})
	}
	for _, c := range clients {
		t.Run(c.name, func(t *testing.T) {
			for _, tc := range []struct {
				url   string
				ok    bool
				event *connectEvent
			}{
				{"https://example.com/", true, &connectEvent{"example.com", 443, true}},
				{"https://other.example.org/", false, &connectEvent{"other.example.org", 443, false}},
				{"https://example.com:8443/", false, &connectEvent{"example.com", 8443, false}},
				{"https://10.0.0.1/", false, &connectEvent{"10.0.0.1", 443, false}},
			} {
				before := len(w.seen())
				out, err := run(t, w.sb, w.workdir, c.line(tc.url))
				reached := strings.Contains(out, "HELLO-FROM")
				if reached != tc.ok {
					t.Errorf("%s: reached %v, want %v (err %v):\n%s", tc.url, reached, tc.ok, err, out)
				}
				got := w.seen()[before:]
				if tc.event != nil && (len(got) == 0 || got[0] != *tc.event) {
					t.Errorf("%s: events %+v, want %+v", tc.url, got, *tc.event)
				}
			}
		})
	}
	// Around the proxy there is nothing: the namespace has only loopback.
	out, err := run(t, w.sb, w.workdir, "env -u HTTPS_PROXY -u https_proxy -u ALL_PROXY -u all_proxy "+connectProbe(w.addr))
	if strings.Contains(out, "CONNECTED") {
		t.Errorf("a command reached a host port around the proxy (err %v):\n%s", err, out)
	}
	out, _ = run(t, w.sb, w.workdir, "echo $HTTPS_PROXY $HTTP_PROXY $ALL_PROXY $http_proxy")
	if f := strings.Fields(out); len(f) != 4 || !strings.HasPrefix(f[0], "http://127.0.0.1:") {
		t.Errorf("the proxy variables are not set to the namespace's bridge: %q", out)
	}
}

// The proxy's rule, alone: names as listed or under a *. pattern, ports 80
// and 443, an address only when listed.
func TestProxyAllowed(t *testing.T) {
	t.Parallel()
	p := &Proxy{Hosts: []string{"proxy.golang.org", "*.npmjs.org", "10.0.0.1", "Example.COM."}}
	for _, c := range []struct {
		host string
		port int
		want bool
	}{
		{"proxy.golang.org", 443, true},
		{"PROXY.golang.org.", 80, true},
		{"proxy.golang.org", 22, false},
		{"sum.golang.org", 443, false},
		{"registry.npmjs.org", 443, true},
		{"npmjs.org", 443, false},
		{"evilnpmjs.org", 443, false},
		{"a.b.npmjs.org", 443, true},
		{"10.0.0.1", 443, true},
		{"10.0.0.2", 443, false},
		{"example.com", 443, true},
		{"", 443, false},
		{"::1", 443, false},
	} {
		if got := p.Allowed(c.host, c.port); got != c.want {
			t.Errorf("Allowed(%q, %d) = %v, want %v", c.host, c.port, got, c.want)
		}
	}
}

// The command is no longer PID 1 of its namespace: a signal it has no
// handler for ends it, as it would outside.
func TestCommandDiesOfSignals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	out, err := run(t, sb, w.workdir, "echo pid=$$; kill -TERM $$; sleep 2; echo SURVIVED")
	if strings.Contains(out, "SURVIVED") || err == nil {
		t.Errorf("a command ignored SIGTERM (err %v):\n%s", err, out)
	}
	if strings.Contains(out, "pid=1\n") {
		t.Errorf("the command runs as PID 1:\n%s", out)
	}
}

// The sandbox's init, PID 1 of the namespaces, keeps no capability once
// the command runs, and the command cannot read its memory or environment.
func TestInitKeepsNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	out, err := run(t, sb, w.workdir, "grep -h '^Cap\\(Prm\\|Eff\\)' /proc/1/task/*/status | sort -u; cat /proc/1/environ >/dev/null 2>&1 && echo ENVIRON-READ; echo done")
	if err != nil || !strings.Contains(out, "done") {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(line, "Cap") && !strings.HasSuffix(line, "0000000000000000") {
			t.Errorf("the init keeps capabilities: %s", line)
		}
	}
	if strings.Contains(out, "ENVIRON-READ") {
		t.Error("the command read the init's environment")
	}
}

// Orphans are reaped by the sandbox's init, not left as zombies of a
// command that never waits for them.
func TestOrphansAreReaped(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := w.policy(ReadOnly, false)
	sb := &Sandbox{Policy: p, Support: requireSupport(t, p)}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3, which waits for no child")
	}
	// The inner shell exits at once, leaving its sleep to PID 1; the
	// command goes on as a program that waits for no child, and looks.
	look := `import glob, time
time.sleep(0.6)
for f in glob.glob("/proc/[0-9]*/status"):
    if "\nState:\tZ" in open(f).read(): print("zombie", f)
print("done")`
	out, err := run(t, sb, w.workdir, "sh -c 'sleep 0.2 &'; exec python3 -c '"+look+"'")
	if err != nil || !strings.Contains(out, "done") {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Contains(out, "/status") {
		t.Errorf("an orphan was left a zombie:\n%s", out)
	}
}

// The proxy, served directly: plain HTTP to an allowed name is passed on
// in origin form; a head without end is cut off; a refusal says why.
func TestProxyServeConn(t *testing.T) {
	t.Parallel()
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ORIGIN %s %s proxy-auth=%q", r.Host, r.URL.Path, r.Header.Get("Proxy-Authorization"))
	}))
	defer origin.Close()
	p := &Proxy{Hosts: []string{"registry.example"}, Resolve: publicResolver, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, origin.Listener.Addr().String())
	}}
	defer p.Close()
	exchange := func(request string) string {
		client, server := net.Pipe()
		go p.ServeConn(server)
		go func() { io.WriteString(client, request) }()
		b, _ := io.ReadAll(client)
		client.Close()
		return string(b)
	}
	for _, c := range []struct{ name, request, want string }{
		{"plain HTTP", "GET http://registry.example/pkg HTTP/1.1\r\nHost: registry.example\r\nProxy-Authorization: Basic c2VjcmV0\r\n\r\n", `ORIGIN registry.example /pkg proxy-auth=""`},
		{"another host", "GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n", "403 Forbidden"},
		{"another port", "CONNECT registry.example:22 HTTP/1.1\r\nHost: registry.example:22\r\n\r\n", "registry.example:22 is not allowed"},
		{"not a proxy request", "GET /pkg HTTP/1.1\r\nHost: registry.example\r\n\r\n", "400 Bad Request"},
		{"an endless head", "GET http://registry.example/ HTTP/1.1\r\nX: " + strings.Repeat("a", 100<<10), "431"},
	} {
		if got := exchange(c.request); !strings.Contains(got, c.want) {
			t.Errorf("%s: %q, want %q in it", c.name, got, c.want)
		}
	}
}
