// Package session resolves and opens what a deepagents command runs.
//
// Resolve turns a command's flags, the configuration files and the
// settings a continued thread kept into a Spec, once: every later step
// reads the Spec and none changes it. Open opens what a Spec describes
// (the model, the agent's files through package workspace, the MCP
// servers, the subagents, and the deep agent) for run, the interactive
// session, serve and mcp-serve alike.
//
// Resolve reads the configuration files itself (config.yaml, the MCP
// files, the hooks of Claude Code's settings files, the subagent files of
// agents/) rather than taking their parsed contents: which files apply is
// part of what it resolves (the workspace a continued thread kept names
// the workspace's files, --trust-workspace whether its .mcp.json and hooks
// count, an assistant of serve's file reads none of the user's), so a
// caller could not parse them first without resolving twice. It reads
// nothing else: the caller finds the user's folders (Locate), checks the
// workspace folder and loads the thread's settings (LoadKept), and Resolve
// opens no database, model, server or process and writes nothing. What it
// would have said on the way (a setting ignored, a flag that changes what
// a thread ran with) is in Spec.Notes, for the caller to print.
//
// The plain settings are declared once, each a row of settingTable
// (table.go): its flag, its configuration key and whether a thread keeps
// it. RegisterFlags and CheckFlags give the command their flags; Resolve
// walks the table for the configuration and a thread's kept values.
package session
