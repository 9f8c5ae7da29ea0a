package netproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
)

// Bounds of the ClientHello the proxy reads at the start of a tunnel on
// port 443: a TLS record holds at most 2^14 bytes of plaintext, and a
// hello with large key shares spans a few.
const (
	maxRecord      = 1 << 14
	maxClientHello = 64 << 10
)

// extension numbers of the ClientHello the proxy looks at.
const (
	extServerName        = 0
	extEncryptedHello    = 0xfe0d // ECH: its inner server name is hidden
	handshakeClientHello = 1
	recordHandshake      = 0x16
)

// readClientHello reads the TLS records at the start of br that carry a
// whole ClientHello (however it was split into records), and returns
// them as read, for the tunnel to send on, with the hello's server name.
// A hello without a server name is an error: the proxy could not tell
// which site the tunnel asks for. With ECH the name is the outer one (the
// host's public name): browsers send a placeholder ECH extension in every
// hello, which cannot be told from a real one, so it is let through, the
// inner name unseen (as a Host header inside TLS is).
func readClientHello(br *bufio.Reader) (raw []byte, name string, err error) {
	var msg []byte
	need := -1 // the handshake message's length, once its header is read
	for need < 0 || len(msg) < need {
		var head [5]byte
		if _, err := ioFull(br, head[:]); err != nil {
			return raw, "", errors.New("no TLS record")
		}
		if head[0] != recordHandshake {
			return raw, "", errors.New("not a TLS handshake")
		}
		n := int(binary.BigEndian.Uint16(head[3:5]))
		if n == 0 || n > maxRecord || len(raw)+5+n > maxClientHello {
			return raw, "", errors.New("a TLS record too large for a ClientHello")
		}
		body := make([]byte, n)
		if _, err := ioFull(br, body); err != nil {
			return raw, "", errors.New("a TLS record cut short")
		}
		raw = append(append(raw, head[:]...), body...)
		msg = append(msg, body...)
		if need < 0 && len(msg) >= 4 {
			if msg[0] != handshakeClientHello {
				return raw, "", errors.New("not a ClientHello")
			}
			need = 4 + (int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3]))
			if need > maxClientHello {
				return raw, "", errors.New("a ClientHello too large")
			}
		}
	}
	if len(msg) != need {
		return raw, "", errors.New("more than a ClientHello in its records")
	}
	name, _, err = parseClientHello(msg)
	switch {
	case err != nil:
		return raw, "", err
	case name == "":
		return raw, "", errors.New("the ClientHello names no server")
	}
	return raw, name, nil
}

// ioFull is io.ReadFull on a bufio.Reader.
func ioFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// parseClientHello parses a whole ClientHello handshake message and
// returns its server_name ("" for none) and whether it carries ECH.
func parseClientHello(b []byte) (name string, ech bool, err error) {
	bad := errors.New("malformed ClientHello")
	r := reader(b)
	typ, ok := r.u8()
	if !ok || typ != handshakeClientHello {
		return "", false, errors.New("not a ClientHello")
	}
	if n, ok := r.u24(); !ok || n != len(r) {
		return "", false, bad
	}
	if !r.skip(2 + 32) { // version, random
		return "", false, bad
	}
	for _, lenBytes := range []int{1, 2, 1} { // session id, cipher suites, compression
		if !r.skipVector(lenBytes) {
			return "", false, bad
		}
	}
	if len(r) == 0 {
		return "", false, nil // no extensions
	}
	exts, ok := r.vector(2)
	if !ok || len(r) != 0 {
		return "", false, bad
	}
	seen := 0
	for len(exts) > 0 {
		typ, ok1 := exts.u16()
		body, ok2 := exts.vector(2)
		if !ok1 || !ok2 {
			return "", false, bad
		}
		switch typ {
		case extEncryptedHello:
			ech = true
		case extServerName:
			seen++
			if seen > 1 {
				return "", false, fmt.Errorf("%w: two server_name extensions", bad)
			}
			list, ok := body.vector(2)
			if !ok {
				return "", false, bad
			}
			for len(list) > 0 {
				kind, ok1 := list.u8()
				host, ok2 := list.vector(2)
				if !ok1 || !ok2 {
					return "", false, bad
				}
				if kind == 0 { // host_name
					if name != "" {
						return "", false, fmt.Errorf("%w: two host names", bad)
					}
					name = string(host)
				}
			}
		}
	}
	return name, ech, nil
}

// reader reads big-endian fields off a byte slice.
type reader []byte

func (r *reader) u8() (byte, bool) {
	if len(*r) < 1 {
		return 0, false
	}
	v := (*r)[0]
	*r = (*r)[1:]
	return v, true
}

func (r *reader) u16() (int, bool) {
	if len(*r) < 2 {
		return 0, false
	}
	v := int(binary.BigEndian.Uint16(*r))
	*r = (*r)[2:]
	return v, true
}

func (r *reader) u24() (int, bool) {
	if len(*r) < 3 {
		return 0, false
	}
	v := int((*r)[0])<<16 | int((*r)[1])<<8 | int((*r)[2])
	*r = (*r)[3:]
	return v, true
}

func (r *reader) skip(n int) bool {
	if len(*r) < n {
		return false
	}
	*r = (*r)[n:]
	return true
}

// vector reads a length-prefixed field (lenBytes 1 or 2).
func (r *reader) vector(lenBytes int) (reader, bool) {
	var n int
	var ok bool
	if lenBytes == 1 {
		var b byte
		b, ok = r.u8()
		n = int(b)
	} else {
		n, ok = r.u16()
	}
	if !ok || len(*r) < n {
		return nil, false
	}
	v := (*r)[:n]
	*r = (*r)[n:]
	return v, true
}

func (r *reader) skipVector(lenBytes int) bool {
	_, ok := r.vector(lenBytes)
	return ok
}
