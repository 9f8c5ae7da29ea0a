package isolate

import (
	"fmt"
	"strings"
)

// Bounds of Report.Text: the lines of a hunk's side shown, and the hunks
// shown in all.
const (
	maxHunkLines = 12
	maxHunks     = 20
)

// Text is the report for the agent that called the subagent and for the
// person: what was merged back into the folder, and each conflict with
// its hunks (cut at a few lines each). Paths are shown as the file tools
// name them ("/" and the path).
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The subagent worked in a workspace of its own (a %s of the folder); ", r.Kind)
	if !r.Changed() && len(r.Conflicts) == 0 && len(r.Skipped) == 0 && len(r.Errors) == 0 {
		b.WriteString("it changed no file.")
		return b.String()
	}
	b.WriteString("its changes were merged back into the folder.")
	list := func(what string, ps []string) {
		if len(ps) > 0 {
			fmt.Fprintf(&b, "\n- %s: %s", what, strings.Join(slashed(ps), ", "))
		}
	}
	list("Applied", r.Applied)
	list("Removed", r.Removed)
	list("Merged with changes the folder had since", r.Merged)
	list("Not carried back (links and special files)", r.Skipped)
	list("Failed (the workspace is kept at "+r.Kept+")", r.Errors)
	shown := 0
	for _, c := range r.Conflicts {
		fmt.Fprintf(&b, "\n- CONFLICT in /%s: %s", c.Path, c.Reason)
		switch {
		case c.SavedAs != "":
			fmt.Fprintf(&b, "; the subagent's version is saved as /%s. Combine the two, then remove /%s.", c.SavedAs, c.SavedAs)
		case len(c.Hunks) > 0:
			fmt.Fprintf(&b, ". The file holds both versions of %d hunk(s) between conflict markers (<<<<<<< the folder's, =======, the subagent's, >>>>>>>): edit each to what it should be and remove the markers.", len(c.Hunks))
		}
		for _, h := range c.Hunks {
			if shown == maxHunks {
				b.WriteString("\n  (more hunks not shown)")
				break
			}
			shown++
			fmt.Fprintf(&b, "\n  at line %d:\n  the folder's:", h.Line)
			side(&b, h.Ours)
			b.WriteString("\n  the subagent's:")
			side(&b, h.Theirs)
		}
	}
	return b.String()
}

func side(b *strings.Builder, ls []string) {
	if len(ls) == 0 {
		b.WriteString(" (nothing)")
		return
	}
	for i, l := range ls {
		if i == maxHunkLines {
			fmt.Fprintf(b, "\n    ... (%d more lines)", len(ls)-i)
			return
		}
		b.WriteString("\n    " + strings.TrimRight(l, "\r\n"))
	}
}

func slashed(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "/" + p
	}
	return out
}
