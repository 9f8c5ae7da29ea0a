package netproxy

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"time"
)

// dialTimeout bounds a connection's set-up to its host.
const dialTimeout = 30 * time.Second

// nonPublic are the address ranges a name may not lead to unless
// Config.Hosts maps it: this machine, its private and link-local
// networks, the carrier-grade NAT range, and the ranges that are no
// host's.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),   // NAT64 of any of the above
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64
	netip.MustParsePrefix("2002::/16"),      // 6to4, which wraps an IPv4 address
	netip.MustParsePrefix("::/96"),          // IPv4-compatible
	netip.MustParsePrefix("fec0::/10"),      // site-local
	netip.MustParsePrefix("100::/64"),       // discard
	netip.MustParsePrefix("2001:db8::/32"),  // documentation
}

// public reports whether a may be reached by name.
func public(a netip.Addr) bool {
	a = a.Unmap()
	if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// dial connects to host on port: through Config.Hosts where it lists the
// name, else to the first public address the name resolves to. The
// connection counts its bytes into the proxy's usage of host and port.
//
// The connection's bytes sent count against m (nil: none, in tests).
func (p *Proxy) dial(ctx context.Context, host string, port int, m *Meter) (net.Conn, error) {
	host = normalizeHost(host)
	key := hostPort(host, port)
	addr, ok := p.cfg.Hosts[key]
	if !ok {
		lookup := p.cfg.LookupIP
		if lookup == nil {
			lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
				// As a fully qualified name: the resolver's search
				// domains must not turn an allowed name into another.
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host+".")
			}
		}
		addrs, err := lookup(ctx, host)
		if err != nil {
			return nil, fmt.Errorf("%s does not resolve: %w", host, err)
		}
		var chosen netip.Addr
		for _, a := range addrs {
			if public(a) {
				chosen = a
				break
			}
		}
		if !chosen.IsValid() {
			return nil, &refusal{fmt.Sprintf("%s resolves to %v, an address of this machine or a private network, which commands may not reach", host, addrs)}
		}
		addr = netip.AddrPortFrom(chosen.Unmap(), uint16(port)).String()
	}
	dial := p.cfg.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: dialTimeout}
		dial = d.DialContext
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s:%d: %w", host, port, err)
	}
	u := p.usageOf(key)
	u.connections.Add(1)
	return &countedConn{Conn: c, p: p, m: m, key: key, u: u}, nil
}

// countedConn is a connection to a host that adds what it carries to the
// proxy's usage and closes itself once the proxy's cap on bytes sent is
// passed.
type countedConn struct {
	net.Conn
	p        *Proxy
	m        *Meter
	key      string
	u        *hostUsage
	out, in  atomic.Int64
	reported atomic.Bool
}

func (c *countedConn) Write(b []byte) (int, error) {
	if err := c.m.take(len(b)); err != nil {
		c.Conn.Close()
		return 0, err
	}
	n, err := c.Conn.Write(b)
	c.m.give(len(b) - n)
	c.p.sentOut.Add(int64(n))
	c.out.Add(int64(n))
	c.u.out.Add(int64(n))
	return n, err
}

func (c *countedConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	c.in.Add(int64(n))
	c.u.in.Add(int64(n))
	return n, err
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	if c.reported.CompareAndSwap(false, true) {
		c.p.log.Debug("netproxy: closed", "host", c.key, "bytes_out", c.out.Load(), "bytes_in", c.in.Load())
	}
	return err
}

// Meter counts the bytes a run's commands send, against a cap: past it,
// their connections close and new ones are refused. Config.MeterOf gives
// each command its run's. It is safe for concurrent use.
type Meter struct {
	max    int64
	sent   atomic.Int64
	capped atomic.Bool // a write would have passed max: nothing more goes
}

// NewMeter returns a meter of max bytes (0: DefaultMaxBytesOut; below
// zero, no cap).
func NewMeter(max int64) *Meter {
	if max == 0 {
		max = DefaultMaxBytesOut
	}
	return &Meter{max: max}
}

// Sent returns the bytes sent so far.
func (m *Meter) Sent() int64 {
	if m == nil {
		return 0
	}
	return m.sent.Load()
}

// take takes n bytes from the cap before they are written, so that
// concurrent writers cannot pass it together; past it the meter is spent.
func (m *Meter) take(n int) error {
	if m == nil {
		return nil
	}
	if m.capped.Load() {
		return m.refusal()
	}
	if m.sent.Add(int64(n)) > m.max && m.max > 0 {
		m.sent.Add(-int64(n))
		m.capped.Store(true)
		return m.refusal()
	}
	return nil
}

// give returns what a write took and did not write.
func (m *Meter) give(n int) {
	if m != nil && n != 0 {
		m.sent.Add(-int64(n))
	}
}

// spent reports whether the meter refuses everything now.
func (m *Meter) spent() bool { return m != nil && m.capped.Load() }

// refusal is the refusal of what would pass the cap.
func (m *Meter) refusal() error {
	return &refusal{"the run's commands have sent what they may (" + strconv.FormatInt(m.max, 10) + " bytes in all)"}
}
