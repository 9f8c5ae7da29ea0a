package netproxy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// ErrPattern is returned for a host pattern that is not one.
var ErrPattern = errors.New("netproxy: bad host pattern")

// Presets are named lists of the hosts a package manager needs, which an
// allow list names as "@name" ("@go", "@npm").
var Presets = map[string][]string{
	"go":     {"proxy.golang.org", "sum.golang.org"},
	"npm":    {"registry.npmjs.org", "registry.yarnpkg.com"},
	"pip":    {"pypi.org", "files.pythonhosted.org"},
	"cargo":  {"crates.io", "index.crates.io", "static.crates.io"},
	"apt":    {"deb.debian.org", "security.debian.org", "archive.ubuntu.com", "security.ubuntu.com", "ports.ubuntu.com"},
	"github": {"github.com", "api.github.com", "codeload.github.com", "objects.githubusercontent.com", "raw.githubusercontent.com"},
}

// DefaultPorts are the ports a pattern without a port allows.
var DefaultPorts = []int{80, 443}

// pattern is one parsed host pattern: a name, or every name under a
// domain (wildcard), on a port (0: DefaultPorts when allowing, any port
// when denying).
type pattern struct {
	name     string // lower case, without the "*." of a wildcard
	wildcard bool
	port     int
	text     string // as written
}

// parsePattern parses "host", "*.domain" or either with ":port".
func parsePattern(s string) (pattern, error) {
	p := pattern{text: s}
	host := strings.ToLower(strings.TrimSpace(s))
	if h, port, ok := strings.Cut(host, ":"); ok {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return p, fmt.Errorf("%w %q: the port must be a number from 1 to 65535", ErrPattern, s)
		}
		host, p.port = h, n
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host, p.wildcard = rest, true
	}
	if _, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return p, fmt.Errorf("%w %q: name a host, not an IP address (commands may not reach addresses)", ErrPattern, s)
	}
	if !validName(host) {
		return p, fmt.Errorf("%w %q: want a host name such as github.com, *.example.com or example.com:8443", ErrPattern, s)
	}
	p.name = host
	return p, nil
}

// validName reports whether s is a DNS name of letters, digits, hyphens
// and dots (an underscore allowed, as some real names have one).
func validName(s string) bool {
	if s == "" || len(s) > 253 || strings.HasPrefix(s, ".") || strings.HasSuffix(s, ".") {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// matchesName reports whether host (lower case) is p's name or, for a
// wildcard, a name under it.
func (p pattern) matchesName(host string) bool {
	if p.wildcard {
		return strings.HasSuffix(host, "."+p.name)
	}
	return host == p.name
}

// Rules are allow and deny lists of host patterns: "github.com" (that
// name), "*.example.com" (every name under example.com, not the domain
// itself), either with ":port"; in Allow, "@name" stands for the hosts of
// Presets[name]. A name the deny list matches is refused whatever allows
// it; a pattern without a port denies every port but allows only
// DefaultPorts.
type Rules struct {
	allow, deny []pattern
}

// Verdict is what rules say of a host.
type Verdict int

const (
	// Unlisted is a host no rule names: Config.Ask decides, else it is
	// refused.
	Unlisted Verdict = iota
	// Allowed is a host an allow rule names, on a port it allows.
	Allowed
	// Denied is a host a deny rule names.
	Denied
)

// ParseRules parses allow and deny lists (see Rules).
func ParseRules(allow, deny []string) (Rules, error) {
	var r Rules
	var errs []error
	for _, s := range allow {
		ps, err := expand(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.allow = append(r.allow, ps...)
	}
	for _, s := range deny {
		if strings.HasPrefix(strings.TrimSpace(s), "@") {
			errs = append(errs, fmt.Errorf("%w %q: presets are for allowing; deny their hosts by name", ErrPattern, s))
			continue
		}
		p, err := parsePattern(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		r.deny = append(r.deny, p)
	}
	return r, errors.Join(errs...)
}

// expand parses one allow entry: a pattern, or "@preset".
func expand(s string) ([]pattern, error) {
	name, ok := strings.CutPrefix(strings.TrimSpace(s), "@")
	if !ok {
		p, err := parsePattern(s)
		return []pattern{p}, err
	}
	hosts, ok := Presets[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: no such preset (there are %s)", ErrPattern, s, strings.Join(PresetNames(), ", "))
	}
	out := make([]pattern, 0, len(hosts))
	for _, h := range hosts {
		p, err := parsePattern(h)
		if err != nil {
			return nil, err
		}
		p.text = s + " (" + h + ")"
		out = append(out, p)
	}
	return out, nil
}

// PresetNames returns the names of Presets, sorted.
func PresetNames() []string {
	names := make([]string, 0, len(Presets))
	for n := range Presets {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Decide says what r says of host (a name, any case) on port, and the rule
// that says it ("" for Unlisted).
func (r Rules) Decide(host string, port int) (Verdict, string) {
	host = strings.ToLower(host)
	for _, p := range r.deny {
		if p.matchesName(host) && (p.port == 0 || p.port == port) {
			return Denied, p.text
		}
	}
	for _, p := range r.allow {
		if p.matchesName(host) && allowsPort(p.port, port) {
			return Allowed, p.text
		}
	}
	return Unlisted, ""
}

// Empty reports whether r has no rule at all.
func (r Rules) Empty() bool { return len(r.allow) == 0 && len(r.deny) == 0 }

func allowsPort(rulePort, port int) bool {
	if rulePort == 0 {
		return slices.Contains(DefaultPorts, port)
	}
	return rulePort == port
}
