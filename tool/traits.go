package tool

// Traits say what a tool may do, for the layers that treat tools by what
// they do rather than by name: workspace checkpoints (package rewind) scan
// the folder only after a tool that may change it in ways nobody reports.
// They are declared where the tool is built (WithTraits, or a Traits
// method); the zero value claims nothing, and a tool without traits is
// taken to do anything.
type Traits struct {
	// ReadOnly: the tool changes nothing outside the run's own state (no
	// file, no process, nothing remote).
	ReadOnly bool
	// EditsFiles: the tool changes files, and nothing else, only through
	// the backend it was built on, which tells the call's context of each
	// change (backend.WithChanges).
	EditsFiles bool
}

// Traited is implemented by tools that declare their Traits.
type Traited interface {
	Traits() Traits
}

// TraitsOf returns the traits t declares; the zero Traits when it
// declares none.
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
