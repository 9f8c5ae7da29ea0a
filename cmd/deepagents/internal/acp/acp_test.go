package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/tool"
)

// TestPromptMessage: a prompt's text, embedded resources and resource
// links make one user message; images are parts of their own.
func TestPromptMessage(t *testing.T) {
	m, err := promptMessage([]sdk.ContentBlock{
		sdk.TextBlock("Explain this"),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file:///w/main.go", Text: "package main"}}),
		sdk.ResourceLinkBlock("go.mod", "file:///w/go.mod"),
		sdk.ImageBlock("aGk=", "image/png"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if m.Role != llm.RoleUser || len(m.Parts) != 2 {
		t.Fatalf("message %+v", m)
	}
	want := "Explain this\n\n<context uri=\"file:///w/main.go\">\npackage main\n</context>\n\n[go.mod](file:///w/go.mod)"
	if m.Parts[0].Text != want {
		t.Errorf("text %q, want %q", m.Parts[0].Text, want)
	}
	if p := m.Parts[1]; p.Type != llm.PartImage || string(p.Data) != "hi" || p.MIMEType != "image/png" {
		t.Errorf("image part %+v", p)
	}
	if _, err := promptMessage(nil); err == nil {
		t.Error("an empty prompt was taken")
	}
	if _, err := promptMessage([]sdk.ContentBlock{sdk.AudioBlock("aGk=", "audio/wav")}); err == nil {
		t.Error("audio was taken")
	}
}

// TestClientPath: the agent's paths are under the workspace, ".." or not.
func TestClientPath(t *testing.T) {
	for p, want := range map[string]string{"/src/a.go": "/w/src/a.go", "src/a.go": "/w/src/a.go", "/../../etc/passwd": "/w/etc/passwd"} {
		if got := clientPath("/w", p); got != want {
			t.Errorf("clientPath(%q) = %q, want %q", p, got, want)
		}
	}
}

// TestEditDiff: an edit's diff is the whole file before and after it; a
// file that is not there gives the strings replaced.
func TestEditDiff(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := newCall(fsWorkspace(dir), "c1", "edit_file", json.RawMessage(`{"file_path":"/a.txt","old_string":"one","new_string":"1","replace_all":true}`))
	d := c.diff[0].Diff
	if c.kind != sdk.ToolKindEdit || d == nil || *d.OldText != "one\ntwo\none\n" || d.NewText != "1\ntwo\n1\n" || d.Path != filepath.Join(dir, "a.txt") {
		t.Fatalf("call %+v diff %+v", c, d)
	}
	c = newCall(fsWorkspace(dir), "c2", "edit_file", json.RawMessage(`{"file_path":"/missing.txt","old_string":"x","new_string":"y"}`))
	if d := c.diff[0].Diff; *d.OldText != "x" || d.NewText != "y" {
		t.Errorf("diff of a missing file %+v", d)
	}
	if c := newCall(fsWorkspace(dir), "c3", "execute", json.RawMessage(`{"command":"go test ./...\necho"}`)); c.title != "execute: go test ./..." || c.kind != sdk.ToolKindExecute {
		t.Errorf("execute call %+v", c)
	}
}

// TestReplay: a thread's conversation replays as user and agent messages,
// tool calls with their ends, and the plan.
func TestReplay(t *testing.T) {
	snap := &checkpoint.Snapshot{
		Messages: []llm.Message{
			llm.UserText("hi"),
			{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartReasoning, Text: "hmm"}, llm.Text("Reading.")},
				ToolCalls: []llm.ToolCall{{ID: "r1", Name: "read_file", Args: json.RawMessage(`{"file_path":"/a.txt"}`)}, {ID: "x1", Name: "execute", Args: json.RawMessage(`{"command":"ls"}`)}}},
			llm.ToolResult("r1", "read_file", "one", false),
			llm.AssistantText("Done."),
		},
		Values: map[string]json.RawMessage{"todos": json.RawMessage(`[{"content":"Read","status":"completed"}]`)},
	}
	var got []string
	for _, u := range replay(snap, fsWorkspace("/w")) {
		data, err := json.Marshal(u)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		`{"content":{"text":"hi","type":"text"},"sessionUpdate":"user_message_chunk"}`,
		`{"content":{"text":"hmm","type":"text"},"sessionUpdate":"agent_thought_chunk"}`,
		`"locations":[{"path":"/w/a.txt"}]`, `"status":"completed","toolCallId":"r1"`,
		`"status":"pending","title":"execute: ls","toolCallId":"x1"`,
		`{"content":{"text":"Done.","type":"text"},"sessionUpdate":"agent_message_chunk"}`,
		`{"entries":[{"content":"Read","priority":"medium","status":"completed"}],"sessionUpdate":"plan"}`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("replay lacks %s:\n%s", want, all)
		}
	}
}

// fsWorkspace is a workspace in dir whose agent has the filesystem's tools.
func fsWorkspace(dir string) *Workspace {
	return &Workspace{Dir: dir, Traits: func(name string) tool.Traits {
		tr, _ := filesystem.ToolTraits(name)
		return tr
	}}
}

// A tool's kind is what it declares it does, whatever its name.
func TestKindOf(t *testing.T) {
	ws := fsWorkspace("/w")
	for name, want := range map[string]sdk.ToolKind{
		"read_file": sdk.ToolKindRead, "grep": sdk.ToolKindSearch, "ls": sdk.ToolKindSearch,
		"write_file": sdk.ToolKindEdit, "execute": sdk.ToolKindExecute, "write_todos": sdk.ToolKindThink,
		"mcp__x__y": sdk.ToolKindOther,
	} {
		if got := kindOf(name, ws.traits(name)); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	for tr, want := range map[tool.Traits]sdk.ToolKind{
		{ReadOnly: true}: sdk.ToolKindRead, {ReadOnly: true, Network: true}: sdk.ToolKindFetch,
		{RunsCommands: true}: sdk.ToolKindExecute, {EditsFiles: true}: sdk.ToolKindEdit, {}: sdk.ToolKindOther,
	} {
		if got := kindOf("mcp__x__y", tr); got != want {
			t.Errorf("%+v: %s, want %s", tr, got, want)
		}
	}
	if got := kindOf("read_file", (&Workspace{}).traits("read_file")); got != sdk.ToolKindOther {
		t.Errorf("a workspace that does not tell: %s", got)
	}
}
