// Package backend defines where an agent's files live and how they are
// reached: the [Backend] protocol (list, read, write, edit, grep, glob,
// upload and download), the optional [Sandbox] extension that runs shell
// commands, and the implementations that ship with the harness:
//
//   - [StateBackend]: files kept in the thread's state, saved with its
//     checkpoints.
//   - [FilesystemBackend]: files under a root directory on local disk.
//   - [StoreBackend]: files kept as items of a cross-thread store.Store.
//   - [Composite]: routes paths to other backends by longest prefix.
//   - [Policy]: allows or denies reads and writes by path around any backend.
//   - [Buffered]: an editor's unsaved buffers in front of another backend.
//
// The Sandbox that ships with the harness, sandbox.LocalShell (a
// FilesystemBackend that also runs commands with sh -c, in the bubblewrap
// sandbox where it is available), is in package
// [github.com/deepagents-go/deepagents/backend/sandbox], beside this
// interface: that folder holds all the isolation the harness promises.
//
// Paths are virtual: absolute, slash-separated, already normalised by the
// caller (see [Clean]). Errors are Go values ([ErrNotFound], [ErrExists], ...);
// the tool layer turns them into the texts the model sees.
//
// The package backendtest holds a conformance suite every implementation,
// including a user's own, can run in one line.
package backend
