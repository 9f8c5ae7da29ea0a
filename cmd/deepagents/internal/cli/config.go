package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/permission"
)

// configFile is the name of the CLI's configuration file, in the user's
// ~/.deepagents and in a workspace's .deepagents.
const configFile = "config.yaml"

// config is what a configuration file may hold. Unknown keys are errors,
// so a typo does not silently leave a rule out.
type config struct {
	// Model is the default --model.
	Model string `yaml:"model"`
	// InterruptOn are the tools that need approval by default
	// (--interrupt-on).
	InterruptOn []string `yaml:"interrupt_on"`
	// Shell and Sandbox are the defaults of --shell, --sandbox and
	// --network.
	Shell   *bool          `yaml:"shell"`
	Sandbox *sandboxConfig `yaml:"sandbox"`
	// MCPServers are MCP servers, as the mcpServers of a .mcp.json.
	MCPServers  map[string]any `yaml:"mcp_servers"`
	Permissions ruleLists      `yaml:"permissions"`
	// Prices, by "provider:model", add to or replace the built-in list
	// prices the text output's costs come from (US dollars per million
	// tokens).
	Prices map[string]llm.Price `yaml:"prices"`
	// ProtectedPaths replace the workspace paths file tools ask before
	// writing and the sandbox keeps read-only (backend.ProtectedPaths by
	// default; an empty list turns the protection off). In a workspace's
	// file they add to the list.
	ProtectedPaths *[]string `yaml:"protected_paths"`
}

// sandboxConfig is how execute is isolated.
type sandboxConfig struct {
	Mode    string `yaml:"mode"` // bwrap or none
	Network *bool  `yaml:"network"`
}

// applyConfig makes the user's configuration file the defaults of the
// flags not given, and adds the approvals of the workspace's. A
// workspace's file comes with the repository the agent works on, so it may
// only add approvals and ask and deny rules (see permissionRules): its
// model, shell, sandbox and MCP servers are ignored, with a note.
func applyConfig(env Env, f *runFlags, interactive bool) error {
	if f.fromAssistant {
		return nil // an assistants file says all
	}
	given := f.given
	if given == nil {
		given = func(string) bool { return false }
	}
	if path := userConfigPath(env); path != "" {
		c, err := f.config(path)
		if err != nil {
			return usageError{err}
		}
		if c.Model != "" && !given("model") {
			f.model = c.Model
		}
		if c.InterruptOn != nil && !given("interrupt-on") && !given("auto-approve") {
			f.interrupt, f.interruptOK = strings.Join(c.InterruptOn, ","), true
		}
		if c.Shell != nil && !given("shell") && !f.stateWorkspace {
			f.shell = *c.Shell
		}
		if sb := c.Sandbox; sb != nil {
			if sb.Mode != "" && !given("sandbox") {
				if sb.Mode != "bwrap" && sb.Mode != "none" {
					return usageError{fmt.Errorf("%s: sandbox.mode must be bwrap or none, not %q", path, sb.Mode)}
				}
				f.sandbox = sb.Mode
			}
			if sb.Network != nil && !given("network") {
				f.network = *sb.Network
			}
		}
		if f.network && f.sandbox == "none" {
			f.network = false // without a sandbox commands have the network anyway
		}
		if len(c.MCPServers) > 0 {
			data, err := json.Marshal(map[string]any{"mcpServers": c.MCPServers})
			if err != nil {
				return usageError{fmt.Errorf("%s: mcp_servers: %w", path, err)}
			}
			if f.configMCP, err = mcp.Parse(data, env.Getenv); err != nil {
				return usageError{fmt.Errorf("%s: mcp_servers: %w", path, err)}
			}
		}
	}
	path := filepath.Join(f.dir, ".deepagents", configFile)
	c, err := f.config(path)
	if err != nil {
		return usageError{err}
	}
	if c.Model != "" || c.Shell != nil || c.Sandbox != nil || len(c.MCPServers) > 0 {
		fmt.Fprintf(env.Stderr, "note: %s: model, shell, sandbox and mcp_servers in a workspace's configuration are ignored (it may only add approvals and ask and deny rules); put them in %s\n", path, filepath.Join("~/.deepagents", configFile))
	}
	if len(c.InterruptOn) > 0 && !f.autoApprove {
		f.interrupt, f.interruptOK = strings.Join(append(f.interruptOn(interactive), c.InterruptOn...), ","), true
	}
	return nil
}

// ruleLists are permission rules as written: "tool" or "tool(pattern)".
type ruleLists struct {
	Allow []string `yaml:"allow" json:"allow,omitempty"`
	Ask   []string `yaml:"ask" json:"ask,omitempty"`
	Deny  []string `yaml:"deny" json:"deny,omitempty"`
}

// userConfigPath is the user's configuration file: config.yaml in
// DEEPAGENTS_HOME when that is set, else in the XDG configuration
// directory ($XDG_CONFIG_HOME/deepagents, by default ~/.config/deepagents)
// when it has one, else in ~/.deepagents; "" when there is no home.
func userConfigPath(env Env) string {
	if env.Getenv("DEEPAGENTS_HOME") == "" {
		if xdg := xdgConfigDir(env); xdg != "" {
			path := filepath.Join(xdg, "deepagents", configFile)
			if _, err := os.Stat(path); err == nil {
				return path
			}
		}
	}
	if dir := userDir(env); dir != "" {
		return filepath.Join(dir, configFile)
	}
	return ""
}

// config returns the configuration file at path, read once per command:
// applyConfig, permissionRules and userPrices all consult it.
func (f *runFlags) config(path string) (config, error) {
	if r, ok := f.configs[path]; ok {
		return r.config, r.err
	}
	c, err := loadConfig(path)
	if f.configs == nil {
		f.configs = make(map[string]configRead)
	}
	f.configs[path] = configRead{c, err}
	return c, err
}

// configRead is a configuration file as read, or why it could not be.
type configRead struct {
	config config
	err    error
}

// loadConfig reads the configuration file at path; a missing file is an
// empty configuration.
func loadConfig(path string) (config, error) {
	var c config
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil && !errors.Is(err, io.EOF) {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// permissionRules gathers the rules of the user's configuration, the
// workspace's and the flags. A workspace's configuration comes with the
// repository the agent works on, so it may only tighten: its allow rules
// are ignored, with a note on w.
func permissionRules(env Env, f *runFlags, w io.Writer) (*permission.Rules, error) {
	type source struct {
		name  string
		lists ruleLists
	}
	var sources []source
	if path := userConfigPath(env); path != "" {
		c, err := f.config(path)
		if err != nil {
			return nil, usageError{err}
		}
		sources = append(sources, source{path, c.Permissions})
	}
	path := filepath.Join(f.dir, ".deepagents", configFile)
	c, err := f.config(path)
	if err != nil {
		return nil, usageError{err}
	}
	if len(c.Permissions.Allow) > 0 {
		fmt.Fprintf(w, "note: %s: allow rules in a workspace's configuration are ignored (it may only add ask and deny rules); put them in %s or pass --allow\n", path, filepath.Join("~/.deepagents", configFile))
		c.Permissions.Allow = nil
	}
	sources = append(sources, source{path, c.Permissions}, source{"flags", f.rules})
	var rules []permission.Rule
	for _, s := range sources {
		for _, l := range []struct {
			effect permission.Effect
			specs  []string
		}{{permission.Allow, s.lists.Allow}, {permission.Ask, s.lists.Ask}, {permission.Deny, s.lists.Deny}} {
			for _, spec := range l.specs {
				r, err := permission.ParseRule(l.effect, spec)
				if err != nil {
					return nil, usageError{fmt.Errorf("%s: %w", s.name, err)}
				}
				rules = append(rules, r)
			}
		}
	}
	// The protected paths ask last: an allow rule of the user's
	// (allow write_file) does not reach them, a deny rule still does.
	protected, err := protectedPaths(env, f)
	if err != nil {
		return nil, err
	}
	asks, err := protectedRules(protected)
	if err != nil {
		return nil, err
	}
	rules = append(rules, asks...)
	if len(rules) == 0 {
		return nil, nil
	}
	return permission.New(rules...), nil
}

// userPrices returns the prices of the user's configuration file; a file
// that cannot be read leaves the built-in prices alone (the run's
// permission rules report its errors).
func (f *runFlags) userPrices(env Env) map[string]llm.Price {
	path := userConfigPath(env)
	if path == "" {
		return nil
	}
	c, err := f.config(path)
	if err != nil {
		return nil
	}
	return c.Prices
}
