package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The proxy dials only public unicast addresses: every form of a local,
// private or reserved one is refused.
func TestCheckAddr(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		addr   string
		public bool
	}{
		{"127.0.0.1", false}, {"127.8.9.10", false}, {"::1", false}, {"::ffff:127.0.0.1", false},
		{"169.254.169.254", false}, {"::ffff:169.254.169.254", false}, {"fe80::1", false}, {"fe80::a9fe:a9fe", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"192.168.1.1", false}, {"fc00::1", false}, {"fd00:ec2::254", false},
		{"0.0.0.0", false}, {"::", false}, {"0.1.2.3", false}, {"100.64.0.1", false}, {"198.18.0.1", false},
		{"224.0.0.1", false}, {"ff02::1", false}, {"255.255.255.255", false}, {"240.0.0.1", false}, {"fec0::1", false},
		// NAT64 (well-known and local prefixes) and IPv4-compatible forms of
		// loopback, the metadata service and a private address.
		{"64:ff9b::7f00:1", false}, {"64:ff9b::a9fe:a9fe", false}, {"64:ff9b:1::a00:1", false}, {"::7f00:1", false},
		{"2002:7f00:1::1", false}, {"2002:a9fe:a9fe::1", false}, {"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"2002:808:808::1", true},
		{"8.8.8.8", true}, {"203.0.113.7", true}, {"2606:4700:4700::1111", true}, {"64:ff9b::808:808", true}, {"::ffff:8.8.8.8", true},
	} {
		why := checkAddr(netip.MustParseAddr(tt.addr))
		if (why == "") != tt.public {
			t.Errorf("checkAddr(%s) = %q, want public %v", tt.addr, why, tt.public)
		}
	}
}

// Issue 37, item 4: --allow-host NAME dialled whatever NAME resolved to, so
// a name mapped to 127.0.0.1 reached a host service there. The proxy
// checks each address it got, dials only those, and allows a local one
// only when it is listed as a literal.
func TestProxyChecksTheAddressesItDials(t *testing.T) {
	t.Parallel()
	var dialed []string
	resolve := map[string][]string{
		"loop.example":  {"127.0.0.1"},
		"meta.example":  {"169.254.169.254"},
		"v6.example":    {"::1", "fe80::1"},
		"mixed.example": {"10.0.0.1", "203.0.113.7"},
	}
	p := &Proxy{
		Hosts: []string{"*.example", "10.0.0.1"},
		Resolve: func(_ context.Context, host string) ([]netip.Addr, error) {
			var out []netip.Addr
			for _, a := range resolve[host] {
				out = append(out, netip.MustParseAddr(a))
			}
			return out, nil
		},
		Dial: func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			client, server := net.Pipe()
			go func() {
				defer server.Close()
				if _, err := http.ReadRequest(bufio.NewReader(server)); err == nil {
					io.WriteString(server, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nOK")
				}
			}()
			return client, nil
		},
	}
	defer p.Close()
	exchange := func(host string) string {
		client, server := net.Pipe()
		go p.ServeConn(server)
		go io.WriteString(client, "GET http://"+host+"/ HTTP/1.1\r\nHost: "+host+"\r\n\r\n")
		b, _ := io.ReadAll(client)
		client.Close()
		return string(b)
	}
	for _, host := range []string{"loop.example", "meta.example", "v6.example"} {
		if got := exchange(host); !strings.Contains(got, "403") || !strings.Contains(got, "does not dial") {
			t.Errorf("%s: %q", host, got)
		}
	}
	if len(dialed) != 0 {
		t.Errorf("dialed %q", dialed)
	}
	// The listed literal 10.0.0.1 is allowed; the public address is too.
	if got := exchange("mixed.example"); !strings.Contains(got, "200 OK") || strings.Join(dialed, ",") != "10.0.0.1:80" {
		t.Errorf("mixed.example: %q, dialed %q", got, dialed)
	}
}

// The same for real: a name that the system's resolver maps to 127.0.0.1
// (a hosts file bound over /etc/hosts in a mount namespace of the test's
// own, which also has a network namespace of its own where a service
// listens on 127.0.0.1:80), asked for by a client in the sandbox through
// --allow-host's proxy, does not reach the service; listed as the literal
// 127.0.0.1, it does, which shows the mapping holds.
func TestAllowHostNameResolvingToLoopback(t *testing.T) {
	if testing.Short() {
		t.Skip("slow: it starts a namespace and the sandbox in it")
	}
	requireSupport(t, Policy{Level: ReadOnly})
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestHostsFileHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "ASK_SANDBOX_TEST_HOSTS=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS | syscall.CLONE_NEWNET}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE}
	}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "HOSTS-HELPER-DONE") {
		t.Fatalf("the helper in its namespaces: %v\n%s", err, out)
	}
}

// TestHostsFileHelper is not a test: TestAllowHostNameResolvingToLoopback
// runs it in namespaces of its own.
func TestHostsFileHelper(t *testing.T) {
	if os.Getenv("ASK_SANDBOX_TEST_HOSTS") == "" {
		t.Skip("run by TestAllowHostNameResolvingToLoopback as a helper")
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		t.Fatal(err)
	}
	hosts := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hosts, []byte("127.0.0.1 registry.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(hosts, "/etc/hosts", "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", "registry.example"); err != nil || len(addrs) == 0 || !addrs[0].IsLoopback() {
		t.Fatalf("the hosts file does not map the name: %v %v", addrs, err)
	}
	loopbackUp()
	ln, err := net.Listen("tcp4", "127.0.0.1:80")
	if err != nil {
		t.Fatal(err)
	}
	var hits atomic.Int32
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "HOST-SERVICE")
	})}
	go srv.Serve(ln)
	defer srv.Close()
	for _, tc := range []struct {
		hosts []string
		reach bool
	}{
		{[]string{"registry.example"}, false},
		{[]string{"registry.example", "127.0.0.1"}, true},
	} {
		w := newWorld(t)
		proxy := &Proxy{Hosts: tc.hosts}
		p := w.policy(ReadOnly, false)
		sb := &Sandbox{Policy: p, Support: requireSupport(t, p), Proxy: proxy}
		before := hits.Load()
		out, _ := run(t, sb, w.workdir, httpsGet("/dev/null", "http://registry.example/"))
		proxy.Close()
		reached := hits.Load() > before || strings.Contains(out, "HOST-SERVICE")
		if reached != tc.reach {
			t.Errorf("--allow-host %v: reached the service on 127.0.0.1 %v, want %v:\n%s", tc.hosts, reached, tc.reach, out)
		}
	}
	fmt.Println("HOSTS-HELPER-DONE")
}
