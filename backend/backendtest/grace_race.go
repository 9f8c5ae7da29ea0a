//go:build race

package backendtest

import "time"

// cancelGrace is how soon a cancelled search must return. The race
// detector slows regular expressions about twentyfold, so under it the
// bound is looser; the test still fails when a search runs to its end.
const cancelGrace = 5 * time.Second
