package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/netproxy"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
)

// NetworkMode is the network sandboxed commands have (--network,
// sandbox.network).
type NetworkMode string

const (
	// NetworkOff is no network at all, not even a proxy (the default).
	NetworkOff NetworkMode = "off"
	// NetworkProxy is the network by name: the hosts the rules allow,
	// through the proxy of package netproxy; a host no rule names asks in
	// the terminal and is refused elsewhere.
	NetworkProxy NetworkMode = "proxy"
	// NetworkHost is the host's network, all of it, unfiltered.
	NetworkHost NetworkMode = "host"
)

// ParseNetworkMode parses a --network value: off (false, no), proxy (on,
// true, yes; --network alone) or host (all).
func ParseNetworkMode(s string) (NetworkMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "off", "false", "no", "none":
		return NetworkOff, nil
	case "proxy", "on", "true", "yes":
		return NetworkProxy, nil
	case "host", "all":
		return NetworkHost, nil
	}
	return "", fmt.Errorf("the network must be off, proxy or host, not %q", s)
}

// UnmarshalYAML takes a boolean (as sandbox.network was) or a mode.
func (m *NetworkMode) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := ParseNetworkMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// UnmarshalJSON takes a boolean (what threads kept before modes) or a
// mode.
func (m *NetworkMode) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case bool:
		*m = map[bool]NetworkMode{true: NetworkProxy, false: NetworkOff}[v]
		return nil
	case string:
		if v == "" {
			*m = ""
			return nil
		}
		mode, err := ParseNetworkMode(v)
		*m = mode
		return err
	case nil:
		*m = ""
		return nil
	}
	return fmt.Errorf("network: want a mode, not %s", b)
}

// threadHostsNamespace is the store namespace of a thread's answers "for this
// thread": under the server's reserved prefix, so that no client of
// deepagents serve's store API can write an answer for a thread.
var threadHostsNamespace = []string{"deepagents", "server", "network_hosts"}

// HostAsker asks the person whether a command may reach a host no rule
// names (the terminal's question).
type HostAsker func(ctx context.Context, q netproxy.Question) (netproxy.Answer, error)

// hostMemory answers what was answered before: the user's "always"
// (written to the user's configuration file, and kept for the session),
// a thread's "for this thread" (in the store, per thread), and asks the
// person the rest, when there is one to ask.
type hostMemory struct {
	store  store.Store
	config string // the user's configuration file, for "always"; "" keeps it for the session only
	ask    HostAsker
	log    *slog.Logger

	mu     sync.Mutex
	always map[string]bool
}

// threadOf returns the user's thread the command runs for, from its
// context: a subagent's commands answer for its parent's thread.
func threadOf(ctx context.Context) string {
	if rt := agent.RuntimeFromContext(ctx); rt != nil {
		return thread.RootID(rt.ThreadID())
	}
	return ""
}

func questionKey(q netproxy.Question) string { return fmt.Sprintf("%s:%d", q.Host, q.Port) }

// answer is the proxy's Config.Ask.
func (h *hostMemory) answer(ctx context.Context, q netproxy.Question) (netproxy.Answer, error) {
	key := questionKey(q)
	h.mu.Lock()
	always := h.always[key]
	h.mu.Unlock()
	if always {
		return netproxy.AllowAlways, nil
	}
	thread := threadOf(ctx)
	if thread != "" && h.store != nil {
		if it, err := h.store.Get(ctx, append(slices.Clone(threadHostsNamespace), thread), key); err == nil && it != nil {
			return netproxy.AllowThread, nil
		}
	}
	if h.ask == nil {
		return netproxy.Deny, netproxy.ErrUnlisted
	}
	a, err := h.ask(ctx, q)
	if err != nil {
		return netproxy.Deny, err
	}
	switch a {
	case netproxy.AllowThread:
		if thread != "" && h.store != nil {
			err := h.store.Put(ctx, append(slices.Clone(threadHostsNamespace), thread), key, map[string]any{"answered": time.Now().UTC().Format(time.RFC3339)})
			if err != nil {
				h.log.Warn("network: the thread's answer is not kept", "host", key, "err", err)
			}
		}
	case netproxy.AllowAlways:
		h.mu.Lock()
		h.always[key] = true
		h.mu.Unlock()
		if h.config != "" {
			if err := addAllowedDomain(h.config, allowEntry(q)); err != nil {
				h.log.Warn("network: the answer is kept for this session only", "host", key, "err", err)
			}
		}
	}
	return a, nil
}

// allowEntry is the allow rule of q's host: its name, with the port
// when it is not a default one.
func allowEntry(q netproxy.Question) string {
	if slices.Contains(netproxy.DefaultPorts, q.Port) {
		return q.Host
	}
	return questionKey(q)
}

// addAllowedDomain adds host to sandbox.allow_domains of the configuration
// file at path (made when missing), keeping the rest of the file, its
// comments included.
func addAllowedDomain(path, host string) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a linked configuration stays linked: its target changes
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var doc yaml.Node
	if len(bytes.TrimSpace(data)) > 0 {
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	if doc.Kind == 0 {
		doc = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode}}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not a mapping", path)
	}
	sandbox := mappingValue(root, "sandbox", yaml.MappingNode)
	list := mappingValue(sandbox, "allow_domains", yaml.SequenceNode)
	if sandbox == nil || list == nil {
		return fmt.Errorf("%s: sandbox.allow_domains is not a list", path)
	}
	for _, n := range list.Content {
		if n.Value == host {
			return nil
		}
	}
	list.Content = append(list.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: host})
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*.yaml")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	mode := fs.FileMode(0o600)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if _, err := tmp.Write(out); err != nil {
		tmp.Close()
		return err
	}
	if err := errors.Join(tmp.Chmod(mode), tmp.Close()); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// mappingValue returns the value of key in the mapping m, adding it (of
// kind) when missing; nil when m is not a mapping or the value is not of
// kind.
func mappingValue(m *yaml.Node, key string, kind yaml.Kind) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
				v.Kind, v.Tag, v.Value = kind, "", ""
			}
			if v.Kind != kind {
				return nil
			}
			return v
		}
	}
	v := &yaml.Node{Kind: kind}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key}, v)
	return v
}

// networkEvent tells the run of each of the proxy's decisions: a notice
// named "network" in its event stream (the jsonl output prints it, the
// terminal shows the refusals).
func networkEvent(ctx context.Context, e netproxy.Event) {
	rt := agent.RuntimeFromContext(ctx)
	if rt == nil {
		return
	}
	n := deepagents.Event{Type: deepagents.EventNotice, Name: display.NetworkNotice,
		Content: fmt.Sprintf("network: allowed %s:%d (%s)", e.Host, e.Port, e.Reason)}
	if !e.Allowed {
		n.Content, n.Error = fmt.Sprintf("network: refused %s:%d (%s)", e.Host, e.Port, e.Reason), e.Reason
	}
	rt.Emit(n)
}

// meterKey is the run-local key of a run's netproxy.Meter.
type meterKey struct{}

// openProxy returns the proxy of spec's sandboxed commands, nil when they
// have none (no shell, no sandbox, or a network mode other than proxy).
func openProxy(spec Spec, deps Deps) (*netproxy.Proxy, error) {
	if spec.Network != NetworkProxy || !spec.Shell || spec.Sandbox != "bwrap" || spec.StateWorkspace || spec.Dir == "" {
		return nil, nil
	}
	var st store.Store
	if deps.DB != nil {
		st = deps.DB.Store
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	mem := &hostMemory{store: st, config: spec.UserConfig, ask: deps.AskHost, log: log, always: map[string]bool{}}
	p, err := netproxy.New(netproxy.Config{
		Allow:       spec.AllowDomains,
		Deny:        spec.DenyDomains,
		Ask:         mem.answer,
		Hosts:       spec.NetResolve,
		MaxBytesOut: spec.NetMaxBytesOut,
		// A run's commands (those of its subagents count in theirs) share
		// a cap: a session, a served agent above all, has many runs.
		MeterOf: func(ctx context.Context) *netproxy.Meter {
			rt := agent.RuntimeFromContext(ctx)
			if rt == nil {
				return nil
			}
			return rt.LocalOrSet(meterKey{}, netproxy.NewMeter(spec.NetMaxBytesOut)).(*netproxy.Meter)
		},
		OnEvent: networkEvent,
		Logger:  log,
		Hint: func(hostPort string) string {
			return "allow it with --allow-domain " + hostPort + ", or in sandbox.allow_domains of ~/.deepagents/config.yaml"
		},
	})
	if err != nil {
		return nil, UsageError{err}
	}
	return p, nil
}
