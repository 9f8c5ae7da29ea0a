// Package cli implements the deepagents command: its cobra commands, the
// text and jsonl output of run, the approvals asked on a terminal, and the
// threads' bookkeeping (titles, usage, the last thread of a workspace). It
// lives apart from package main so that tests can run commands
// in-process. What a command runs is resolved and opened by package
// session; the interactive session is package tui.
package cli
