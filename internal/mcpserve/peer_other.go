//go:build !linux

package mcpserve

import (
	"errors"
	"net"
)

// peerUID cannot tell a connection's user here: --listen serves no one
// rather than every user of the machine.
func peerUID(net.Conn) (int, error) {
	return 0, errors.New("this system does not say which user a loopback connection comes from; use stdio")
}
