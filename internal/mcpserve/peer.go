package mcpserve

import (
	"fmt"
	"net"
)

// sameUserListener accepts only connections from processes of the user
// ask runs as: loopback is reachable by every user of the machine, and a
// connection runs tools as this one. Others are closed at once.
type sameUserListener struct {
	net.Listener
	uid    int
	refuse func(why string)
}

func (l sameUserListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, err := peerUID(c)
		if err == nil && uid == l.uid {
			return c, nil
		}
		c.Close()
		if l.refuse != nil {
			why := fmt.Sprintf("a connection from %s of user %d: only user %d's processes are served", c.RemoteAddr(), uid, l.uid)
			if err != nil {
				why = fmt.Sprintf("a connection from %s whose user cannot be told (%v)", c.RemoteAddr(), err)
			}
			l.refuse(why)
		}
	}
}
