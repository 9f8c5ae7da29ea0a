// Package backendtest is the conformance suite for backend.Backend
// implementations. Every backend of this module runs it, and so can yours:
//
//	func TestMyBackend(t *testing.T) {
//		backendtest.Run(t, func(t *testing.T) backend.Backend {
//			return mybackend.New(...) // empty, fresh for each test
//		})
//	}
//
// The suite uses only the public API. It checks each method's results and
// errors: create-only writes, edits with zero, one and many matches, read
// windows and the line rules, sorted listings, glob's "*" and "**", grep's
// modes and filters, batch uploads and downloads with per-file error codes,
// concurrent use (run it with -race), and, for a backend.Sandbox, Execute.
package backendtest
