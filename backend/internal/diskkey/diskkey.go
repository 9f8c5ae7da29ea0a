// Package diskkey holds the type that only the packages under backend can
// name: a method taking it can be implemented by them alone, which is how
// backend knows a sandbox of its own (backend/sandbox's LocalShell) from a
// user's type that embeds one.
package diskkey

// Key is the parameter of such a method; its value means nothing.
type Key struct{}
