package tool

// Traits say what a tool may do, for the layers that treat tools by what
// they do rather than by name: permission rules (read rules cover every
// tool that reads files), plan mode (it offers the tools that only read),
// accept-edits (it runs the tools that edit files), workspace checkpoints
// (package rewind scans the folder only after a tool that may change it in
// ways nobody reports), the hooks' and editors' kinds of tool, and the
// terminal. They are declared where the tool is built ([WithTraits], or a
// Traits method: the filesystem middleware, the task tool, an MCP server's
// tools from their annotations); the zero value claims nothing, and a tool
// without traits is taken to do anything.
type Traits struct {
	// ReadOnly: the tool changes nothing outside the run's own state (no
	// file, no process, nothing remote).
	ReadOnly bool
	// ReadsFiles: the tool shows files of the workspace, or their names,
	// from its path argument ("file_path" or "path"; none is the root), so
	// that the rules on what read_file may read cover it too.
	ReadsFiles bool
	// EditsFiles: the tool changes files, and nothing else, only through
	// the backend it was built on, which tells the call's context of each
	// change (backend.WithChanges).
	EditsFiles bool
	// RunsCommands: the tool runs the shell command of its "command"
	// argument, which can do anything the user can.
	RunsCommands bool
	// Network: the tool reaches other hosts.
	Network bool
	// Delegates: the tool hands its work to subagents, which inherit the
	// thread's mode and rules (plan mode offers it: its subagents only
	// read there too).
	Delegates bool
	// Polls: the tool reports on work that goes on elsewhere (a
	// background task's status), so that the same call may answer
	// otherwise later: calling it again is waiting, not a loop.
	Polls bool
}

// Traited is implemented by tools that declare their Traits.
type Traited interface {
	Traits() Traits
}

// TraitsOf returns the traits t declares; the zero Traits when it
// declares none or t is nil.
func TraitsOf(t Tool) Traits {
	if tt, ok := t.(Traited); ok {
		return tt.Traits()
	}
	return Traits{}
}

// WithTraits declares what a tool built by [New] may do.
func WithTraits(tr Traits) Option {
	return func(c *config) { c.traits = tr }
}
