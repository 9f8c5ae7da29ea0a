package netproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"time"
)

// SOCKS5 (RFC 1928), as much of it as a command needs: no
// authentication, CONNECT only, by name only.
const (
	socksVersion      = 5
	socksNoAuth       = 0
	socksNoMethod     = 0xff
	socksConnect      = 1
	socksAtypIPv4     = 1
	socksAtypName     = 3
	socksAtypIPv6     = 4
	socksOK           = 0
	socksFailure      = 1
	socksNotAllowed   = 2
	socksUnreachable  = 4
	socksBadCommand   = 7
	socksBadAddrType  = 8
	socksMaxNameBytes = 255
)

// serveSOCKS serves one SOCKS5 connection: its CONNECT is decided, then a
// tunnel. An address given as an IP is refused as the HTTP side refuses
// one.
func (l *Listener) serveSOCKS(c *conn) {
	br := c.br
	var head [2]byte
	if _, err := io.ReadFull(br, head[:]); err != nil {
		return
	}
	methods := make([]byte, head[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	method := byte(socksNoMethod)
	for _, m := range methods {
		if m == socksNoAuth {
			method = socksNoAuth
		}
	}
	if _, err := c.Write([]byte{socksVersion, method}); err != nil || method != socksNoAuth {
		return
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil {
		return
	}
	if req[0] != socksVersion {
		return
	}
	if req[1] != socksConnect {
		socksReply(c, socksBadCommand)
		return
	}
	host, err := readSOCKSAddr(br, req[3])
	if err != nil {
		socksReply(c, socksBadAddrType)
		return
	}
	var portBytes [2]byte
	if _, err := io.ReadFull(br, portBytes[:]); err != nil {
		return
	}
	port := int(binary.BigEndian.Uint16(portBytes[:]))
	c.SetReadDeadline(time.Time{})
	c.head.unlimit()
	host, err = l.decide(host, port)
	if err != nil {
		socksReply(c, socksNotAllowed)
		return
	}
	if port == 80 {
		if socksReply(c, socksOK) == nil {
			l.serveHTTP(c, host)
		}
		return
	}
	up, err := l.p.dial(l.ctx, host, port, l.meter)
	if err != nil {
		var r *refusal
		if errors.As(err, &r) {
			socksReply(c, socksNotAllowed)
		} else {
			socksReply(c, socksUnreachable)
		}
		return
	}
	defer up.Close()
	if socksReply(c, socksOK) != nil {
		return
	}
	l.tunnel(c, up, host, port)
}

// readSOCKSAddr reads a request's address of type atyp: a name, or an IP
// (returned as text, for decide to refuse).
func readSOCKSAddr(br *bufio.Reader, atyp byte) (string, error) {
	switch atyp {
	case socksAtypName:
		n, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(br, name); err != nil {
			return "", err
		}
		return string(name), nil
	case socksAtypIPv4, socksAtypIPv6:
		size := net.IPv4len
		if atyp == socksAtypIPv6 {
			size = net.IPv6len
		}
		ip := make([]byte, size)
		if _, err := io.ReadFull(br, ip); err != nil {
			return "", err
		}
		return net.IP(ip).String(), nil
	}
	return "", errors.New("unknown address type")
}

// socksReply answers a request with code and an empty bound address.
func socksReply(c net.Conn, code byte) error {
	_, err := c.Write([]byte{socksVersion, code, 0, socksAtypIPv4, 0, 0, 0, 0, 0, 0})
	return err
}
