package session

import (
	"slices"
	"strings"

	"github.com/deepagents-go/deepagents/middleware/filesystem"
)

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
