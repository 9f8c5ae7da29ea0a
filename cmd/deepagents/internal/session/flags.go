package session

import (
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

// Flags are the values of the flags of a command that runs an agent, as
// given or by default. The command checks them (a known --sandbox, an
// existing --dir) before it resolves anything.
type Flags struct {
	Model string
	// Profile is --profile: the built-in harness profile to use instead of
	// the model's.
	Profile string
	// Dir is the workspace folder: --dir, else the current directory;
	// absolute, its symbolic links resolved.
	Dir      string
	MaxSteps int
	// MaxCost is --max-cost: the dollars a task (a prompt) may spend; 0 is
	// no limit, and Given("max-cost") says whether it was set.
	MaxCost    float64
	Durability string
	Shell      bool
	Sandbox    string // "bwrap" or "none"
	// Network is --network: "" when not given, else a NetworkMode's
	// text as given (the command checks it). AllowDomains and DenyDomains are
	// --allow-domain and --deny-domain.
	Network                   string
	AllowDomains, DenyDomains []string
	GrepRegexp                bool
	InterruptOn               string // comma-separated, as given
	// PermissionMode is --permission-mode ("" when not given); AutoApprove
	// (--auto-approve) is --permission-mode auto.
	PermissionMode string
	AutoApprove    bool
	Record         string
	Rules          RuleLists // --allow, --ask, --deny
	// MCPConfigs are --mcp-config files.
	MCPConfigs []string
	// TrustWorkspace (--trust-workspace) trusts what the workspace's files
	// name to run: the MCP servers of its .mcp.json start, and the hooks
	// of its .deepagents/config.yaml and .claude/settings*.json run.
	TrustWorkspace bool
	// AllowSystemDir (--allow-system-dir) accepts a system folder as the
	// workspace (see checkWorkspaceDir).
	AllowSystemDir bool
	// ProtectedPaths is --protected-paths.
	ProtectedPaths string
	// Given reports whether a flag was set on the command line, by name
	// ("model", "interrupt-on"): those win over the configuration and a
	// thread's settings. Nil means none was.
	Given func(name string) bool
}

// defaultInterruptOn are the tools that ask for approval on a terminal.
var defaultInterruptOn = []string{filesystem.WriteFileTool, filesystem.EditFileTool, filesystem.ExecuteTool}

// interruptOn returns the tools that need approval, as resolved so far,
// for a run on a terminal or not.
func (r *resolver) interruptOn(interactive bool) []string {
	f := &r.f
	switch {
	case r.interruptOK:
		return splitList(f.InterruptOn)
	case interactive && f.Shell:
		return slices.Clone(defaultInterruptOn)
	case interactive: // execute is not offered
		return slices.DeleteFunc(slices.Clone(defaultInterruptOn), func(name string) bool { return name == filesystem.ExecuteTool })
	}
	return nil
}

func joinList(l []string) string { return strings.Join(l, ",") }
