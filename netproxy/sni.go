package netproxy

import (
	"bufio"
	"encoding/binary"
	"errors"
)

// maxClientHello bounds the bytes read to find a ClientHello's server
// name: one TLS record.
const maxClientHello = 5 + 1<<14

// peekServerName returns the server name (SNI) of the TLS ClientHello at
// the start of br, without consuming it: "" when it has none, an error
// when br does not start with a ClientHello.
func peekServerName(br *bufio.Reader) (string, error) {
	head, err := br.Peek(5)
	if err != nil {
		return "", errors.New("no TLS record")
	}
	if head[0] != 0x16 { // handshake
		return "", errors.New("not a TLS handshake")
	}
	n := int(binary.BigEndian.Uint16(head[3:5]))
	if n > maxClientHello-5 {
		return "", errors.New("TLS record too large")
	}
	if br.Size() < 5+n {
		return "", errors.New("TLS record too large")
	}
	rec, err := br.Peek(5 + n)
	if err != nil {
		return "", errors.New("TLS record cut short")
	}
	return serverName(rec[5:])
}

// serverName parses a ClientHello handshake message (as the first record
// carries it) and returns its server_name, or "".
func serverName(b []byte) (string, error) {
	bad := errors.New("malformed ClientHello")
	r := reader(b)
	typ, ok := r.u8()
	if !ok || typ != 1 { // client_hello
		return "", errors.New("not a ClientHello")
	}
	if _, ok := r.u24(); !ok {
		return "", bad
	}
	if !r.skip(2 + 32) { // version, random
		return "", bad
	}
	for _, lenBytes := range []int{1, 2, 1} { // session id, cipher suites, compression
		if !r.skipVector(lenBytes) {
			return "", bad
		}
	}
	if len(r) == 0 {
		return "", nil // no extensions
	}
	exts, ok := r.vector(2)
	if !ok {
		return "", bad
	}
	for len(exts) > 0 {
		typ, ok1 := exts.u16()
		body, ok2 := exts.vector(2)
		if !ok1 || !ok2 {
			return "", bad
		}
		if typ != 0 { // server_name
			continue
		}
		list, ok := body.vector(2)
		if !ok {
			return "", bad
		}
		for len(list) > 0 {
			kind, ok1 := list.u8()
			name, ok2 := list.vector(2)
			if !ok1 || !ok2 {
				return "", bad
			}
			if kind == 0 { // host_name
				return string(name), nil
			}
		}
		return "", nil
	}
	return "", nil
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
