package session

import (
	"strings"

	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

// defaultInterruptOn are the tools that ask for approval on a terminal:
// the file tools the run offers whose traits say they edit files or run
// commands (execute only with a shell, multi_edit only with --multi-edit).
func defaultInterruptOn(f *Flags) []string {
	var out []string
	for _, name := range filesystem.ToolNames() {
		tr, _ := filesystem.ToolTraits(name)
		switch {
		case tr.RunsCommands && !f.Shell, name == filesystem.MultiEditTool && !f.MultiEdit:
		case tr.EditsFiles || tr.RunsCommands:
			out = append(out, name)
		}
	}
	return out
}

// interruptOn returns the tools that need approval, as resolved so far,
// for a run on a terminal or not.
func (r *resolver) interruptOn(interactive bool) []string {
	switch {
	case r.interruptOK:
		return splitList(r.f.InterruptOn)
	case interactive:
		return defaultInterruptOn(&r.f)
	}
	return nil
}

func joinList(l []string) string { return strings.Join(l, ",") }
