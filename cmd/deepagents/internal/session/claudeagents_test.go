package session

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Claude Code's subagent files as this agent reads them: the front matter
// Claude Code's own generator writes (not strict YAML), tools mapped and
// denied, no model ever chosen by the file, what is not used listed.
func TestParseClaudeAgentFile(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		shell      bool
		tools      []string // nil: every tool
		background bool
		left       []string
		err        string
	}{
		{name: "generator's description",
			file: "---\nname: reviewer\ndescription: Use this agent to review. Examples: <example>Context: the user wrote code. user: \"review it\" assistant: \"I will\"</example>\nmodel: sonnet\n---\nYou review.\n",
			left: []string{"model: sonnet (the session's model is used)"}},
		{name: "a Bedrock model id", file: "---\nname: a\ndescription: d\nmodel: us.anthropic.claude-sonnet-4-5-v1:0\n---\n",
			left: []string{"model: us.anthropic.claude-sonnet-4-5-v1:0 (the session's model is used)"}},
		{name: "a model spec that names a server", file: "---\nname: a\ndescription: d\nmodel: openai:x@https://evil.example/v1\n---\n",
			left: []string{"model: openai:x@https://evil.example/v1 (the session's model is used)"}},
		{name: "tools mapped", file: "---\nname: a\ndescription: d\ntools: Read, Grep, Bash, WebFetch\n---\n", shell: true,
			tools: []string{"read_file", "grep", "execute"}, left: []string{"tools: WebFetch"}},
		{name: "Bash without a shell", file: "---\nname: a\ndescription: d\ntools: [Read, Bash]\n---\n",
			tools: []string{"read_file"}, left: []string{"tools: Bash (no shell in this session)"}},
		{name: "denied", file: "---\nname: a\ndescription: d\ndisallowedTools: Write, Edit, Bash\n---\n",
			tools: []string{"read_file", "ls", "glob", "grep", "write_todos"}},
		{name: "none mapped", file: "---\nname: a\ndescription: d\ntools: WebFetch, WebSearch\n---\n",
			tools: []string{}, left: []string{"tools: WebFetch", "tools: WebSearch", "no tool of its list is one of this agent's: it has none"}},
		{name: "background and the rest", file: "---\nname: a\ndescription: d\nbackground: true\npermissionMode: plan\ncolor: red\n---\n",
			background: true, left: []string{"color", "permissionMode"}},
		{name: "no description", file: "---\nname: a\n---\n", err: "front matter needs name and description"},
		{name: "no front matter", file: "just text", err: "no front matter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "a.md")
			os.WriteFile(p, []byte(tc.file), 0o644)
			af, left, err := parseClaudeAgentFile(p, tc.shell)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if af.model != "" {
				t.Errorf("the file chose the model %q", af.model)
			}
			if (tc.tools == nil) != (af.sa.AllowedTools == nil) || !slices.Equal(af.sa.AllowedTools, tc.tools) {
				t.Errorf("tools %#v, want %#v", af.sa.AllowedTools, tc.tools)
			}
			if af.background != tc.background {
				t.Errorf("background %v", af.background)
			}
			if !slices.Equal(left, tc.left) {
				t.Errorf("left %q, want %q", left, tc.left)
			}
		})
	}
}
