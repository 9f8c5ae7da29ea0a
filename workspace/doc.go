// Package workspace opens the files a deep agent works on as the
// deepagents command line lays them out, so that a program can run an
// agent on the same files the CLI does in a few lines:
//
//   - "/" is the workspace folder (Config.Dir), with the execute tool when
//     Config.Shell is set, isolated by a bubblewrap sandbox
//     (Config.Sandbox); without a folder, each thread's state;
//   - /memories/ is long-term memory in a store.Store, shared by every
//     thread;
//   - /user/ is the user's own folder (Config.UserDir: ~/.deepagents for
//     the CLI), read-only: its AGENTS.md and skills/ shape every run, so
//     the model may read them but not plant instructions there;
//   - /conversation_history/ is where summarization keeps the messages it
//     summarized: one folder per top-level thread under Config.HistoryDir
//     (the CLI's is beside its SQLite database), so that a run sees its own
//     thread's history and its subagents', never another thread's; without
//     a folder, the thread's state;
//   - /large_tool_results/ is in the thread's state.
//
// With Config.Buffers (an editor's, as deepagents acp gets them from the
// client), the workspace folder's text files are read and written through
// the editor instead (backend.Buffered), each path checked as the disk's
// first; everything else stays on disk.
//
// Open returns the backend, the memory and skill sources to give the deep
// agent (deepagents.Config.Memory and Skills) and the middleware that
// scopes the history to the run's thread (deepagents.Config.Middleware).
//
// What the model may not touch stays out of reach whatever the workspace
// is: the host paths of Config.ReadOnly cannot be written, those of
// Config.Unreadable cannot be read, by the file tools (decided by real
// path, see backend.FilesystemOptions) as by the sandbox; and the paths the
// permission rules deny read_file are left out of listings, globs and greps
// too, and hidden from the sandbox's commands. docs/security.md says what
// each layer promises.
package workspace
