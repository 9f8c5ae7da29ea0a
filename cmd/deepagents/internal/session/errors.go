package session

// UsageError marks an error in how a command was called or configured: a
// flag, a configuration file, a subagent or assistants file. The command
// exits with its usage status.
type UsageError struct{ Err error }

// Error is the error's own message.
func (e UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the error.
func (e UsageError) Unwrap() error { return e.Err }
