package tui

import (
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/colorprofile"
)

// The session's styles (lipgloss's) write every colour they name; what
// the terminal is then given goes through one place that knows what it
// and the user allow: NO_COLOR (no colour, bold and faint kept), TERM=dumb
// or an output that is not a terminal (no escape sequence at all),
// and terminals of 16 or 256 colours. The renderer does so for the
// view; colours does for what is printed above it.

// detectColours is the colour profile of out in the process's
// environment, as the renderer detects it.
func detectColours(out io.Writer) colorprofile.Profile {
	return colorprofile.Detect(out, os.Environ())
}

// colours returns s as the terminal of profile p is to be given it: its
// colours lowered to what p has, none under NO_COLOR; its escape sequences
// all removed when p is no terminal. Unknown leaves s as it is.
func colours(p colorprofile.Profile, s string) string {
	if p == colorprofile.Unknown || p == colorprofile.TrueColor {
		return s
	}
	var b strings.Builder
	w := colorprofile.Writer{Forward: &b, Profile: p}
	if _, err := w.WriteString(s); err != nil {
		return s // only an unknown profile fails, handled above
	}
	return b.String()
}
