//go:build !race

package backendtest

import "time"

// cancelGrace is how soon a cancelled search must return: the issue's
// "within a second".
const cancelGrace = time.Second
