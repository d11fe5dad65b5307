package mcpserve

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

// peerUID is the user that owns the other end of c, a TCP connection on
// loopback, as the kernel's socket table says (/proc/net/tcp and tcp6:
// the client's socket has c's remote port as its local port and c's
// local port as its remote one).
func peerUID(c net.Conn) (int, error) {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return 0, fmt.Errorf("not a TCP connection")
	}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		uid, found, err := findSocketUID(table, remote.Port, local.Port)
		if err != nil {
			return 0, err
		}
		if found {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("the client's socket is not in the kernel's table")
}

// findSocketUID reads one socket table for the socket whose local port is
// localPort and remote port remotePort.
func findSocketUID(table string, localPort, remotePort int) (uid int, found bool, err error) {
	f, err := os.Open(table)
	if os.IsNotExist(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 {
			continue
		}
		if hexPort(fields[1]) != localPort || hexPort(fields[2]) != remotePort {
			continue
		}
		uid, err := strconv.Atoi(fields[7])
		if err != nil {
			return 0, false, fmt.Errorf("%s: %q is no uid", table, fields[7])
		}
		return uid, true, nil
	}
	return 0, false, sc.Err()
}

// hexPort is the port of a socket table's ADDRESS:PORT, both in hex.
func hexPort(field string) int {
	_, port, ok := strings.Cut(field, ":")
	if !ok {
		return -1
	}
	n, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}
