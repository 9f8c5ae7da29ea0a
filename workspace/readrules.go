package workspace

import (
	"context"
	"fmt"
	"time"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/permission"
)

// withReadRules wraps b so that its listings, globs, greps and reads
// leave out the paths the rules deny read_file (DeniedReadPaths: a rule
// without a pattern, deny read_file, takes the tool away, not the files,
// so memory and skills still load). A shell stays a shell:
// the sandbox masks what commands may not read, not this wrapper.
func withReadRules(b backend.Backend, rules *permission.Rules) (backend.Backend, error) {
	globs := rules.DeniedReadPaths()
	if len(globs) == 0 {
		return b, nil
	}
	var rs []backend.Rule
	for _, g := range globs {
		rs = append(rs, backend.Deny(backend.AccessRead, g))
	}
	pol, err := backend.NewPolicy(b, rs...)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrReadRules, err)
	}
	if sb, ok := b.(backend.Sandbox); ok {
		return &policyShell{Policy: pol, sb: sb}, nil
	}
	return pol, nil
}

// policyShell is a Policy around the workspace's backend that still runs
// commands: the agent is given a shell on purpose (Config.Shell), and the
// policy governs the file tools only.
type policyShell struct {
	*backend.Policy
	sb backend.Sandbox
}

var _ backend.Sandbox = (*policyShell)(nil)

// Execute implements backend.Sandbox.
func (p *policyShell) Execute(ctx context.Context, command string, timeout time.Duration) (backend.ExecResult, error) {
	return p.sb.Execute(ctx, command, timeout)
}

// ID implements backend.Sandbox.
func (p *policyShell) ID() string { return p.sb.ID() }

// TimeoutLimits implements backend.TimeoutLimiter, as the shell it wraps.
func (p *policyShell) TimeoutLimits() (def, max time.Duration) { return backend.Limits(p.sb) }
