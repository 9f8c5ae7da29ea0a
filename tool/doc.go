// Package tool defines what an agent can call: the [Tool] interface, typed
// tools built from Go functions with [New] (their JSON Schema inferred from
// the input struct, arguments validated before the function runs), and the
// [ArgumentError] that tells a model which argument it got wrong.
package tool
