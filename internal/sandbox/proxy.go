package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy is the one way out of a sandbox whose commands may reach some
// hosts (--allow-host): an HTTP proxy that ask runs outside the sandbox's
// network namespace. It takes CONNECT and plain HTTP requests, and
// connects only to the allowed names on ports 80 and 443, resolving them
// itself (so a command cannot choose the address); an IP address only when
// it is listed as such. Each connection asked for is told to OnConnect.
type Proxy struct {
	// Hosts are the allowed names: "proxy.golang.org", "*.npmjs.org" (any
	// name under npmjs.org, not npmjs.org itself), or an IP address.
	Hosts []string
	// OnConnect hears of every connection a command asked for.
	OnConnect func(host string, port int, allowed bool)
	// Resolve finds a name's addresses; nil asks the system's resolver.
	// The proxy dials only the addresses it got and checked (checkAddr).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to a checked address (ip:port); nil dials as the
	// system does. Tests map addresses to their own servers here.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu    sync.Mutex
	conns map[net.Conn]bool
	done  bool
}

// ProxyPorts are the only ports the proxy connects to.
var ProxyPorts = []int{80, 443}

// Allowed says whether the proxy connects to host:port.
func (p *Proxy) Allowed(host string, port int) bool {
	if port != 80 && port != 443 {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	ip := net.ParseIP(host)
	for _, h := range p.Hosts {
		h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
		h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
		if ip != nil {
			// An address only as listed: no pattern reaches one.
			if lip := net.ParseIP(h); lip != nil && lip.Equal(ip) {
				return true
			}
			continue
		}
		if domain, ok := strings.CutPrefix(h, "*."); ok {
			if strings.HasSuffix(host, "."+domain) {
				return true
			}
			continue
		}
		if host == h {
			return true
		}
	}
	return false
}

// addresses are the addresses the proxy may dial for an allowed host: the
// literal itself, as listed; or what the name resolves to, each address
// checked (checkAddr), the refused left out. It is an error when none is
// left.
func (p *Proxy) addresses(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil // Allowed let it through only as listed
	}
	resolve := p.Resolve
	if resolve == nil {
		resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	found, err := resolve(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("cannot resolve %s: %v", host, err)
	}
	var ok []netip.Addr
	var refused []string
	for _, a := range found {
		if why := checkAddr(a); why != "" && !p.listed(a) {
			refused = append(refused, a.String()+" ("+why+")")
			continue
		}
		ok = append(ok, a)
	}
	if len(ok) == 0 {
		if len(refused) == 0 {
			return nil, fmt.Errorf("%s has no address", host)
		}
		return nil, fmt.Errorf("%s resolves only to addresses the proxy does not dial: %s; list an address with --allow-host to allow it", host, strings.Join(refused, ", "))
	}
	return ok, nil
}

// listed reports whether address a is listed in Hosts as a literal.
func (p *Proxy) listed(a netip.Addr) bool {
	for _, h := range p.Hosts {
		h = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(h), "["), "]")
		if l, err := netip.ParseAddr(h); err == nil && l.Unmap() == a.Unmap() {
			return true
		}
	}
	return false
}

// dial connects to the first of addrs that answers, on port.
func (p *Proxy) dial(ctx context.Context, addrs []netip.Addr, port int) (net.Conn, error) {
	dial := p.Dial
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var first error
	for _, a := range addrs {
		conn, err := dial(ctx, "tcp", netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

// notPublic are the ranges beyond net/netip's own tests that reach no
// public host: this network, shared address space (carrier-grade NAT),
// IETF protocol assignments, benchmarking, the reserved 240/4; IPv6's
// deprecated site-local addresses, NAT64's local-use prefix and Teredo,
// whose IPv4 address is hidden.
var notPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("fec0::/10"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2001::/32"),
}

// embedsIPv4 are IPv6 ranges holding an IPv4 address that a translator or
// tunnel reaches, at byte at: NAT64's well-known prefix and the deprecated
// IPv4-compatible form (the last 32 bits), and 6to4 (after 2002:).
var embedsIPv4 = []struct {
	prefix netip.Prefix
	at     int
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},
	{netip.MustParsePrefix("::/96"), 12},
	{netip.MustParsePrefix("2002::/16"), 2},
}

// checkAddr is why the proxy does not dial a, "" when it may: only public
// unicast addresses, never loopback, link-local (the cloud metadata
// service, 169.254.169.254), private, unspecified, multicast or reserved
// ones, whether written as IPv4, IPv4-mapped IPv6, or embedded in NAT64 or
// 6to4.
func checkAddr(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		for _, e := range embedsIPv4 {
			if e.prefix.Contains(a) && !a.IsUnspecified() {
				b := a.As16()
				if why := checkAddr(netip.AddrFrom4([4]byte(b[e.at : e.at+4]))); why != "" {
					return why + ", embedded in IPv6"
				}
			}
		}
	}
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "link-local"
	case a.IsPrivate():
		return "private"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case !a.IsGlobalUnicast():
		return "not unicast"
	}
	for _, p := range notPublic {
		if p.Contains(a) {
			return "reserved"
		}
	}
	return ""
}

// track keeps conn to be closed by Close; false once the proxy is closed.
func (p *Proxy) track(conn net.Conn, on bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		if p.done {
			return false
		}
		if p.conns == nil {
			p.conns = map[net.Conn]bool{}
		}
		p.conns[conn] = true
	} else {
		delete(p.conns, conn)
	}
	return true
}

// Close ends every connection the proxy carries.
func (p *Proxy) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// ServeConn serves one connection from a sandboxed command: one CONNECT
// tunnel, or plain HTTP requests, each to an allowed host.
func (p *Proxy) ServeConn(conn net.Conn) {
	if !p.track(conn, true) {
		conn.Close()
		return
	}
	defer func() {
		p.track(conn, false)
		conn.Close()
	}()
	// A request's head is bounded: the command is not trusted to end it.
	head := &budgetReader{r: conn}
	br := bufio.NewReader(head)
	for {
		conn.SetReadDeadline(time.Now().Add(2 * time.Minute))
		head.n = maxHead
		req, err := http.ReadRequest(br)
		if err != nil {
			if errors.Is(err, errHeadTooLong) {
				refuse(conn, http.StatusRequestHeaderFieldsTooLarge, "ask: the request's head is too long")
			}
			return
		}
		head.n = math.MaxInt64 // a body or a tunnel may be of any length
		conn.SetReadDeadline(time.Time{})
		if !p.serveRequest(conn, br, req) {
			return
		}
	}
}

// serveRequest answers one request; false ends the connection.
func (p *Proxy) serveRequest(conn net.Conn, br *bufio.Reader, req *http.Request) bool {
	var host string
	var port int
	if req.Method == http.MethodConnect {
		host, port = splitHostPort(req.Host, 443)
	} else {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			refuse(conn, http.StatusBadRequest, "ask's proxy takes CONNECT, or plain HTTP with an absolute http:// URL")
			return false
		}
		host, port = splitHostPort(req.URL.Host, 80)
	}
	ctx, cancel := context.WithTimeout(req.Context(), 30*time.Second)
	defer cancel()
	allowed := p.Allowed(host, port)
	why := fmt.Sprintf("ask: %s is not allowed: only the hosts --allow-host names, on ports 80 and 443", net.JoinHostPort(host, strconv.Itoa(port)))
	var addrs []netip.Addr
	if allowed {
		var err error
		if addrs, err = p.addresses(ctx, host); err != nil {
			allowed, why = false, "ask: "+err.Error()
		}
	}
	if p.OnConnect != nil {
		p.OnConnect(host, port, allowed)
	}
	if !allowed {
		refuse(conn, http.StatusForbidden, why)
		return false
	}
	up, err := p.dial(ctx, addrs, port)
	cancel()
	if err != nil {
		refuse(conn, http.StatusBadGateway, fmt.Sprintf("ask: cannot connect to %s: %v", host, err))
		return false
	}
	if !p.track(up, true) {
		up.Close()
		return false
	}
	defer func() {
		p.track(up, false)
		up.Close()
	}()
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return false
		}
		splice(conn, br, up)
		return false
	}
	// One request per upstream connection: the answer ends with it.
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	if err := req.Write(up); err != nil {
		return false
	}
	io.Copy(conn, up)
	return false
}

// maxHead bounds a request line and its headers.
const maxHead = 64 << 10

var errHeadTooLong = errors.New("request head too long")

// budgetReader reads until its budget is spent.
type budgetReader struct {
	r io.Reader
	n int64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errHeadTooLong
	}
	if int64(len(p)) > b.n {
		p = p[:b.n]
	}
	n, err := b.r.Read(p)
	b.n -= int64(n)
	return n, err
}

// splice copies both ways until either side ends.
func splice(conn net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(up, br) // what the client sent after its request, too
		if tc, ok := up.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		io.Copy(conn, up)
		if tc, ok := conn.(interface{ CloseWrite() error }); ok {
			tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

func refuse(conn net.Conn, code int, msg string) {
	fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n%s\n",
		code, http.StatusText(code), len(msg)+1, msg)
}

func splitHostPort(hostport string, port int) (string, int) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), port
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return host, 0
	}
	return host, n
}
