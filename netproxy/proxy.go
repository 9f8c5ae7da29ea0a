package netproxy

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMaxBytesOut is Config.MaxBytesOut's default: 256 MiB, enough for
// a large push, far less than a workspace of build artefacts.
const DefaultMaxBytesOut int64 = 256 << 20

// maxQuestions bounds the questions one command may have waiting at
// once: a command that asks for host after host gets refusals, not a
// queue of questions a tired person allows.
const maxQuestions = 4

// SocketName is the name of a command's socket in its Listener's Dir.
const SocketName = "proxy.sock"

// Answer is a person's answer to a Question.
type Answer int

const (
	// Deny refuses the connection (and the host for the rest of the
	// command: it is not asked again).
	Deny Answer = iota
	// AllowOnce allows the host until the command ends.
	AllowOnce
	// AllowThread allows the host for the thread the command works for.
	AllowThread
	// AllowAlways allows the host for good.
	AllowAlways
)

// The proxy holds every answer until the command ends: AllowThread and
// AllowAlways say what the asker is to remember, and answer itself the
// next time it is asked (the CLI keeps a thread's answers in its store and
// the user's in their configuration). Proxy.Grant allows a host for the
// proxy's whole life.

// ErrUnlisted, returned by Config.Ask, refuses the host as one no rule
// names and nobody could be asked about (a headless run), with Config.Hint.
var ErrUnlisted = errors.New("netproxy: not an allowed host")

// String names a.
func (a Answer) String() string {
	switch a {
	case AllowOnce:
		return "once"
	case AllowThread:
		return "thread"
	case AllowAlways:
		return "always"
	}
	return "deny"
}

// Question is what Config.Ask is asked: a command wants to reach Host on
// Port, and no rule says whether it may.
type Question struct {
	Host    string
	Port    int
	Command string // the command's label, as given to Proxy.Command
}

// Event is one decision of the proxy, for Config.OnEvent: a connection
// allowed or refused, and why.
type Event struct {
	Host    string
	Port    int
	Allowed bool
	// Reason says why: the rule that allowed or denied, "asked: once",
	// or the refusal's text.
	Reason string
}

// Config configures a Proxy.
type Config struct {
	// Allow and Deny are the rules (see Rules).
	Allow, Deny []string
	// Ask decides a host no rule names; it may block (a person answers)
	// until ctx, the command's, ends. Nil refuses such hosts, as a
	// headless run must (as does ErrUnlisted). It is asked once per host
	// and port and command: other connections to the same host wait for
	// the same answer, and later ones of the command get it.
	Ask func(ctx context.Context, q Question) (Answer, error)
	// Hosts maps names, as "name:port", to the addresses ("ip:port")
	// they reach, instead of DNS and without the check that an address is
	// public: loopback stand-ins in tests, a registry mirror on the
	// local network. A name listed here is still decided by the rules.
	Hosts map[string]string
	// MaxBytesOut caps the bytes the connections of one run's commands
	// may send together (see MeterOf); past it they are closed and new
	// ones refused. Zero means DefaultMaxBytesOut, a negative number no
	// cap.
	MaxBytesOut int64
	// MeterOf returns the meter a command's connections count against,
	// from the command's context: its run's (a Meter of MaxBytesOut made
	// on the run's first command, say). Nil, or a nil result, counts
	// every command against one meter of the proxy's.
	MeterOf func(ctx context.Context) *Meter
	// OnEvent, when set, is told each decision; ctx is the command's (see
	// Proxy.Command), which may carry the caller's values.
	OnEvent func(ctx context.Context, e Event)
	// Hint, when set, is appended to the refusal of a host no rule names
	// and nobody allowed: how to allow it (hostPort is "host" on a default
	// port, else "host:port"), such as "allow it with --allow-domain
	// example.com".
	Hint func(hostPort string) string
	// Logger logs each connection's host, port, decision and byte counts,
	// never what it carries; nil means slog.Default().
	Logger *slog.Logger
	// Dial and LookupIP replace net.Dialer and the default resolver, for
	// tests.
	Dial     func(ctx context.Context, network, addr string) (net.Conn, error)
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
}

// Proxy is the host-side proxy of one session's sandboxed commands. It is
// safe for concurrent use.
type Proxy struct {
	cfg   Config
	rules Rules
	log   *slog.Logger
	meter *Meter // the commands' that MeterOf gives none

	mu      sync.Mutex
	granted map[string]bool // "host:port" allowed by Grant
	usage   map[string]*hostUsage
	closed  bool
	cmds    map[*Listener]bool
	sentOut atomic.Int64 // by every command
}

// HostUsage is what commands exchanged with one host (as "host:port").
type HostUsage struct {
	Host        string
	Connections int   // connections made
	Refused     int   // connections refused
	BytesOut    int64 // bytes sent to it
	BytesIn     int64 // bytes received from it
}

// New returns a proxy with cfg's rules; a bad pattern is an error naming
// it.
func New(cfg Config) (*Proxy, error) {
	rules, err := ParseRules(cfg.Allow, cfg.Deny)
	if err != nil {
		return nil, err
	}
	hosts := make(map[string]string, len(cfg.Hosts))
	for name, addr := range cfg.Hosts {
		host, port, err := splitTarget(name, 0)
		if err != nil || port == 0 {
			return nil, fmt.Errorf("netproxy: Hosts key %q: want name:port", name)
		}
		if _, err := netip.ParseAddrPort(addr); err != nil {
			return nil, fmt.Errorf("netproxy: Hosts[%q] = %q: want ip:port", name, addr)
		}
		hosts[hostPort(normalizeHost(host), port)] = addr
	}
	cfg.Hosts = hosts
	p := &Proxy{
		cfg:     cfg,
		rules:   rules,
		log:     cmp.Or(cfg.Logger, slog.Default()),
		meter:   NewMeter(cfg.MaxBytesOut),
		granted: map[string]bool{},
		usage:   map[string]*hostUsage{},
		cmds:    map[*Listener]bool{},
	}
	return p, nil
}

// Rules returns the proxy's rules.
func (p *Proxy) Rules() Rules { return p.rules }

// Grant allows host on port (0: DefaultPorts) for the rest of the
// proxy's life, without a question. A denied host stays denied.
func (p *Proxy) Grant(host string, port int) error {
	pat, err := parsePattern(host)
	if err != nil {
		return err
	}
	if pat.wildcard {
		return fmt.Errorf("%w %q: a grant names one host", ErrPattern, host)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ports := []int{port}
	if port == 0 {
		ports = DefaultPorts
	}
	for _, n := range ports {
		p.granted[hostPort(pat.name, n)] = true
	}
	return nil
}

// Usage returns what commands exchanged with each host, sorted by host.
func (p *Proxy) Usage() []HostUsage {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]HostUsage, 0, len(p.usage))
	for key, u := range p.usage {
		out = append(out, HostUsage{Host: key, Connections: int(u.connections.Load()), Refused: int(u.refused.Load()),
			BytesOut: u.out.Load(), BytesIn: u.in.Load()})
	}
	slices.SortFunc(out, func(a, b HostUsage) int { return strings.Compare(a.Host, b.Host) })
	return out
}

// BytesOut returns the bytes sent so far, all hosts and runs together.
func (p *Proxy) BytesOut() int64 { return p.sentOut.Load() }

// Close closes every command's listener; their connections end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	cmds := make([]*Listener, 0, len(p.cmds))
	for l := range p.cmds {
		cmds = append(cmds, l)
	}
	p.mu.Unlock()
	for _, l := range cmds {
		l.Close()
	}
	return nil
}

// ErrClosed is returned by Command once the proxy is closed.
var ErrClosed = errors.New("netproxy: closed")

// Listener is one command's socket: a Unix socket (Socket) alone in a
// folder (Dir) only this user may enter, which the sandbox mounts.
type Listener struct {
	// Dir is the folder of Socket; Socket is Dir/SocketName.
	Dir, Socket string

	p     *Proxy
	ln    net.Listener
	ctx   context.Context
	stop  context.CancelFunc
	label string
	meter *Meter
	wg    sync.WaitGroup

	mu     sync.Mutex
	once   map[string]Answer // this command's answers, by "host:port"
	asking map[string]*pending
	conns  map[net.Conn]bool
}

// pending is a question being asked, which other connections to the same
// host wait for.
type pending struct {
	done   chan struct{}
	answer Answer
	err    error
}

// Command opens a socket for one command, labelled label (its text, for
// Config.Ask), serving until Close; ctx is the command's, handed to
// Config.Ask and Config.OnEvent (it does not end the listener).
func (p *Proxy) Command(ctx context.Context, label string) (*Listener, error) {
	dir, err := os.MkdirTemp("", "deepagents-net-")
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	sock := filepath.Join(dir, SocketName)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	meter := p.meter
	if p.cfg.MeterOf != nil {
		if m := p.cfg.MeterOf(ctx); m != nil {
			meter = m
		}
	}
	l := &Listener{Dir: dir, Socket: sock, p: p, ln: ln, ctx: cctx, stop: stop, label: label, meter: meter,
		once: map[string]Answer{}, asking: map[string]*pending{}, conns: map[net.Conn]bool{}}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		ln.Close()
		os.RemoveAll(dir)
		stop()
		return nil, ErrClosed
	}
	p.cmds[l] = true
	p.mu.Unlock()
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

func (l *Listener) accept() {
	defer l.wg.Done()
	for {
		c, err := l.ln.Accept()
		if err != nil {
			if l.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors, say: wait for some to close.
			select {
			case <-l.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			continue
		}
		l.mu.Lock()
		full := len(l.conns) >= maxConns
		if !full {
			l.conns[c] = true
		}
		l.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			defer func() {
				l.mu.Lock()
				delete(l.conns, c)
				l.mu.Unlock()
				c.Close()
			}()
			l.serve(c)
		}()
	}
}

// Close stops the listener, ends its connections and questions, and
// removes its folder.
func (l *Listener) Close() error {
	l.stop()
	err := l.ln.Close()
	l.mu.Lock()
	for c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
	os.RemoveAll(l.Dir)
	l.p.mu.Lock()
	delete(l.p.cmds, l)
	l.p.mu.Unlock()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// refusal is why a connection may not be made, for the command to see.
type refusal struct{ reason string }

func (r *refusal) Error() string { return r.reason }

func hostPort(host string, port int) string { return net.JoinHostPort(host, fmt.Sprint(port)) }

// decide says whether this command may reach host on port: the name as
// the rules match it (normalizeHost), or a refusal saying why. It asks
// Config.Ask once per host and port at a time.
func (l *Listener) decide(host string, port int) (string, error) {
	p := l.p
	host = normalizeHost(host)
	if _, err := netip.ParseAddr(host); err == nil {
		return "", l.refuse(host, port, fmt.Sprintf("%s is an IP address: commands reach hosts by name only", host))
	}
	if !validName(host) {
		return "", l.refuse(host, port, fmt.Sprintf("%q is not a host name", oneLine(host)))
	}
	if l.meter.spent() {
		return "", l.refuse(host, port, l.meter.refusal().Error())
	}
	verdict, rule := p.rules.Decide(host, port)
	switch verdict {
	case Denied:
		return "", l.refuse(host, port, fmt.Sprintf("%s is denied by the rule %q", host, rule))
	case Allowed:
		l.event(host, port, true, "allowed by "+rule)
		return host, nil
	}
	if !slices.Contains(DefaultPorts, port) {
		return "", l.refuse(host, port, fmt.Sprintf("port %d of %s is not allowed: only ports 80 and 443 are, unless a rule names another (%s:%d)", port, host, host, port))
	}
	key := hostPort(host, port)
	p.mu.Lock()
	granted := p.granted[key]
	p.mu.Unlock()
	if granted {
		l.event(host, port, true, "granted")
		return host, nil
	}
	answer, err := l.ask(key, Question{Host: host, Port: port, Command: l.label})
	switch {
	case err != nil:
		return "", l.refuse(host, port, err.Error())
	case answer == Deny:
		return "", l.refuse(host, port, fmt.Sprintf("%s was refused when asked", host))
	}
	l.event(host, port, true, "asked: "+answer.String())
	return host, nil
}

// ask asks Config.Ask, or waits for the same question already asked.
func (l *Listener) ask(key string, q Question) (Answer, error) {
	p := l.p
	l.mu.Lock()
	if a, ok := l.once[key]; ok {
		l.mu.Unlock()
		return a, nil
	}
	if w, ok := l.asking[key]; ok {
		l.mu.Unlock()
		select {
		case <-w.done:
			return w.answer, w.err
		case <-l.ctx.Done():
			return Deny, errors.New("the command ended while its question was asked")
		}
	}
	if p.cfg.Ask == nil {
		l.mu.Unlock()
		return Deny, p.unlisted(q)
	}
	if len(l.asking) >= maxQuestions {
		l.mu.Unlock()
		return Deny, fmt.Errorf("%s is not an allowed host, and %d other hosts are being asked about already", q.Host, maxQuestions)
	}
	w := &pending{done: make(chan struct{})}
	l.asking[key] = w
	l.mu.Unlock()

	w.answer, w.err = p.cfg.Ask(l.ctx, q)
	switch {
	case errors.Is(w.err, ErrUnlisted):
		w.answer, w.err = Deny, p.unlisted(q)
	case w.err != nil:
		w.answer = Deny
		w.err = fmt.Errorf("%s is not an allowed host and could not be asked: %w", q.Host, w.err)
	}
	l.mu.Lock()
	delete(l.asking, key)
	l.once[key] = w.answer
	l.mu.Unlock()
	close(w.done)
	return w.answer, w.err
}

// unlisted is the refusal of a host no rule names and nobody allowed.
func (p *Proxy) unlisted(q Question) error {
	return fmt.Errorf("%s is not an allowed host%s", q.Host, p.hint(q))
}

// hint is Config.Hint's text for q, as " (...)", or "".
func (p *Proxy) hint(q Question) string {
	if p.cfg.Hint == nil {
		return ""
	}
	hp := q.Host
	if !slices.Contains(DefaultPorts, q.Port) {
		hp = hostPort(q.Host, q.Port)
	}
	if h := p.cfg.Hint(hp); h != "" {
		return " (" + h + ")"
	}
	return ""
}

// refuse records and reports a refusal.
func (l *Listener) refuse(host string, port int, reason string) error {
	l.p.usageOf(hostPort(host, port)).refused.Add(1)
	l.event(host, port, false, reason)
	return &refusal{reason}
}

func (l *Listener) event(host string, port int, allowed bool, reason string) {
	l.p.log.Info("netproxy", "host", host, "port", port, "allowed", allowed, "reason", reason)
	if f := l.p.cfg.OnEvent; f != nil {
		f(l.ctx, Event{Host: host, Port: port, Allowed: allowed, Reason: reason})
	}
}

// hostUsage is a HostUsage as it is counted.
type hostUsage struct {
	connections, refused, out, in atomic.Int64
}

// maxUsageHosts bounds the hosts counted apart; the others (names and
// addresses a command made up, refused) are counted as otherHosts.
const (
	maxUsageHosts = 1024
	otherHosts    = "(other hosts)"
)

// usageOf returns key's counters, made on first use.
func (p *Proxy) usageOf(key string) *hostUsage {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.usage[key]
	if u == nil {
		if len(p.usage) >= maxUsageHosts {
			key = otherHosts
			if u = p.usage[key]; u != nil {
				return u
			}
		}
		u = &hostUsage{}
		p.usage[key] = u
	}
	return u
}
