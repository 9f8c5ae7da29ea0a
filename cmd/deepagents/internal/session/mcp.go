package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

// The names of MCP configurations: ~/.deepagents/mcp.json for the user,
// .mcp.json in a workspace (as Claude Code names it).
const (
	userMCPFile      = "mcp.json"
	workspaceMCPFile = ".mcp.json"
)

// mcpConfigs gathers the MCP servers to start: the user's (config.yaml's
// mcp_servers, then mcp.json's), those of each --mcp-config file, and with
// --trust-workspace those of the workspace's .mcp.json; a later file's entry
// replaces an earlier one of the same name.
//
// A workspace's .mcp.json comes with the repository the agent works on and
// names commands to run, so it is read only when asked for: otherwise a
// note says what it would start.
func (r *resolver) mcpConfigs() (map[string]mcp.ServerConfig, error) {
	var paths []string
	userFile := ""
	// An assistant of serve's file does not start the operator's servers.
	if dir := r.in.Places.UserDir; dir != "" && r.in.Assistant == nil {
		userFile = filepath.Join(dir, userMCPFile)
		paths = append(paths, userFile)
	}
	paths = append(paths, r.f.MCPConfigs...)
	ws := filepath.Join(r.f.Dir, workspaceMCPFile)
	if r.f.TrustWorkspace {
		paths = append(paths, ws)
	}
	out := maps.Clone(r.configMCP)
	if out == nil {
		out = map[string]mcp.ServerConfig{}
	}
	// Plugins' servers first: the user's own of a name win.
	for _, p := range r.plugins() {
		file := filepath.Join(p.Dir, workspaceMCPFile)
		getenv := func(name string) string {
			if name == "CLAUDE_PLUGIN_ROOT" {
				return p.Dir
			}
			return r.getenv(name)
		}
		servers, err := mcp.LoadFile(file, getenv)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, UsageError{fmt.Errorf("MCP configuration of plugin %s: %w", p.Name, err)}
		}
		for name, c := range servers {
			if _, ok := out[name]; !ok {
				out[name] = c
			}
		}
	}
	for _, p := range paths {
		servers, err := mcp.LoadFile(p, r.getenv)
		if errors.Is(err, fs.ErrNotExist) && (p == userFile || p == ws) {
			continue // the default files are optional
		}
		if err != nil {
			return nil, UsageError{fmt.Errorf("MCP configuration: %w", err)}
		}
		maps.Copy(out, servers)
	}
	if !r.f.TrustWorkspace {
		if servers, err := mcp.LoadFile(ws, r.getenv); err == nil && len(servers) > 0 {
			r.note("note: %s names MCP servers (%s); they run commands from the workspace, so they start only with --trust-workspace",
				ws, strings.Join(slices.Sorted(maps.Keys(servers)), ", "))
		}
	}
	return out, nil
}

// ConnectMCP starts the MCP servers of spec; nil when there are none. A
// server that does not start is a warning on deps.Logger, and the agent
// runs without it.
func ConnectMCP(ctx context.Context, spec Spec, deps Deps) (*mcp.Servers, error) {
	if len(spec.MCP) == 0 {
		return nil, nil
	}
	return mcp.Connect(ctx, spec.MCP, mcp.Options{Dir: spec.Dir, Getenv: deps.Getenv, Logger: deps.Logger})
}

// withoutFailedServers drops what names the tools of MCP servers that did
// not start (their tools do not exist, so there is nothing to allow, ask
// about or deny): rules, approvals and subagents' tool lists would
// otherwise name unknown tools, which stops the agent from being built.
// cfg's slices are its own (Open builds them), so they are changed in
// place.
func withoutFailedServers(cfg *deepagents.Config, failed []string) {
	if len(failed) == 0 {
		return
	}
	ofFailed := func(name string) bool {
		rest, ok := strings.CutPrefix(name, tool.MCPPrefix)
		if !ok {
			return false
		}
		server, _, _ := strings.Cut(strings.TrimSuffix(rest, "*"), "__")
		return slices.Contains(failed, server)
	}
	if cfg.Permissions != nil {
		rules := slices.DeleteFunc(cfg.Permissions.Rules(), func(r permission.Rule) bool { return ofFailed(r.Tool) })
		cfg.Permissions = permission.New(rules...)
	}
	maps.DeleteFunc(cfg.InterruptOn, func(name string, _ deepagents.InterruptOn) bool { return ofFailed(name) })
	for i := range cfg.Subagents {
		if cfg.Subagents[i].AllowedTools != nil {
			cfg.Subagents[i].AllowedTools = slices.DeleteFunc(cfg.Subagents[i].AllowedTools, ofFailed)
		}
	}
	for i := range cfg.AsyncSubagents {
		if cfg.AsyncSubagents[i].AllowedTools != nil {
			cfg.AsyncSubagents[i].AllowedTools = slices.DeleteFunc(cfg.AsyncSubagents[i].AllowedTools, ofFailed)
		}
	}
}
