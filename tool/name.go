package tool

import "strings"

// MCPPrefix begins the name of every tool an MCP server provides:
// mcp__server__tool.
const MCPPrefix = "mcp__"

// NameMatches reports whether a tool named name is meant by pattern, as
// permission rules and subagents' tool lists write it:
//
//	read_file           that tool
//	mcp__github         every tool of the MCP server "github"
//	mcp__github__*      the same
//	mcp__github__get_*  the tools whose names begin with mcp__github__get_
//
// A trailing * matches any rest of a name; nothing else is special.
func NameMatches(pattern, name string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(name, prefix)
	}
	if pattern == name {
		return true
	}
	// A server's name alone stands for all of its tools.
	return strings.HasPrefix(pattern, MCPPrefix) && !strings.Contains(pattern[len(MCPPrefix):], "__") &&
		strings.HasPrefix(name, pattern+"__")
}
