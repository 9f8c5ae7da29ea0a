// Package isolate gives a subagent that writes a workspace of its own: a
// copy-on-write view of its caller's folder (a git worktree where the
// folder is a repository's top level, a copy elsewhere), where its file
// tools and commands work (through a backend.Redirect) while its siblings
// work in theirs, and merges it back when it ends: a file only it changed
// is taken as it is, one the folder changed too is merged line by line
// (three ways: the folder as it was at the fork, as the subagent left it,
// as it is now), and what cannot be merged is a conflict the Report names,
// with its hunks, with nothing lost: the file holds both versions between
// conflict markers, or (a binary file, a file one side removed) stays as
// the folder has it with the subagent's version saved beside it.
//
// The caller's tree is never stashed, reset or checked out: the base of a
// git worktree is a commit made from a temporary index (a copy of the
// repository's, plus what is not committed), so the repository's index,
// branches and files stay as they are. A workspace is removed only once
// everything in it was merged or saved.
package isolate
