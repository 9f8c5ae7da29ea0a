package acp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/tool"
)

// call is a tool call as the client sees it: a title, a kind, the file it
// touches and, for an edit, its diff.
type call struct {
	id    sdk.ToolCallId
	title string
	kind  sdk.ToolKind
	input any
	// path is the file the call names, as the client's absolute path ("" for
	// none).
	path string
	diff []sdk.ToolCallContent
	// about is content shown before the diff (a background task's call
	// says whose it is); meta is the call's _meta (nil: none).
	about []sdk.ToolCallContent
	meta  map[string]any
}

// content is what the call shows before it ends: about, then the diff.
func (c *call) content() []sdk.ToolCallContent {
	if c.about == nil {
		return c.diff
	}
	return append(append([]sdk.ToolCallContent(nil), c.about...), c.diff...)
}

// callArgs are the arguments of the tools the client is shown more of.
type callArgs struct {
	FilePath   string `json:"file_path"`
	Path       string `json:"path"`
	Content    string `json:"content"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
	Command    string `json:"command"`
	Pattern    string `json:"pattern"`
	URL        string `json:"url"`
	Query      string `json:"query"`
}

// newCall describes the call of tool with args, the agent of ws working.
// The diff of an edit is computed from the file as it is now (before the
// call runs), so that the client shows the whole change.
func newCall(ws *Workspace, id, name string, args json.RawMessage) *call {
	c, a := describe(ws, id, name, args)
	if c.path == "" {
		return c
	}
	switch name {
	case filesystem.WriteFileTool:
		old, err := os.ReadFile(c.path)
		if err != nil {
			c.diff = []sdk.ToolCallContent{sdk.ToolDiffContent(c.path, a.Content)}
		} else {
			c.diff = []sdk.ToolCallContent{sdk.ToolDiffContent(c.path, a.Content, string(old))}
		}
	case filesystem.EditFileTool:
		old, err := os.ReadFile(c.path)
		if err != nil || !strings.Contains(string(old), a.OldString) || a.OldString == "" {
			// The file as it is is unknown (or the edit will fail): the
			// strings replaced are the diff.
			c.diff = []sdk.ToolCallContent{sdk.ToolDiffContent(c.path, a.NewString, a.OldString)}
			break
		}
		n := 1
		if a.ReplaceAll {
			n = -1
		}
		c.diff = []sdk.ToolCallContent{sdk.ToolDiffContent(c.path, strings.Replace(string(old), a.OldString, a.NewString, n), string(old))}
	}
	return c
}

// describe is the call of tool with args without a diff (a replayed call's
// file has changed since), and its arguments as the tools the client is
// shown more of take them.
func describe(ws *Workspace, id, name string, args json.RawMessage) (*call, callArgs) {
	c := &call{id: sdk.ToolCallId(id), title: name, kind: kindOf(name, ws.traits(name))}
	var a callArgs
	if len(args) > 0 {
		var in any
		if json.Unmarshal(args, &in) == nil {
			c.input = in
		}
		_ = json.Unmarshal(args, &a) // other tools' arguments of other types: no detail
	}
	p := a.FilePath
	if p == "" {
		p = a.Path
	}
	if p != "" {
		c.path = clientPath(ws.Dir, p)
		c.title = name + " " + p
	}
	switch {
	case a.Command != "":
		c.title = name + ": " + firstLine(a.Command)
	case a.Pattern != "":
		c.title = name + " " + a.Pattern
	case a.URL != "":
		c.title = name + " " + a.URL
	case a.Query != "":
		c.title = name + ": " + a.Query
	}
	c.title = clipTitle(c.title)
	return c, a
}

// maxTitle is how long a call's title may be: its arguments (a command, a
// path) are the model's, of any length, and the whole of them is the
// call's raw input.
const maxTitle = 300

// clipTitle is title shortened to maxTitle, on one line.
func clipTitle(title string) string {
	return clip.Text(firstLine(title), maxTitle)
}

// clientPath is the absolute path of the agent's path p ("/src/main.go")
// in dir: always under dir, ".." or not.
func clientPath(dir, p string) string {
	if dir == "" {
		return p
	}
	return filepath.Join(dir, filepath.FromSlash(filepath.ToSlash(filepath.Clean("/"+p))))
}

// locations are where the call works.
func (c *call) locations() []sdk.ToolCallLocation {
	if c.path == "" {
		return nil
	}
	return []sdk.ToolCallLocation{{Path: c.path}}
}

// start is the tool_call update announcing the call, with its status.
func (c *call) start(status sdk.ToolCallStatus) sdk.SessionUpdate {
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(c.kind), sdk.WithStartStatus(status)}
	if c.input != nil {
		opts = append(opts, sdk.WithStartRawInput(c.input))
	}
	if content := c.content(); content != nil {
		opts = append(opts, sdk.WithStartContent(content))
	}
	u := sdk.StartToolCall(c.id, c.title, opts...)
	u.ToolCall.Meta = c.meta
	// Set here, not with sdk.WithStartLocations, which adds a path to the
	// raw input: the client is shown the arguments the agent gave.
	u.ToolCall.Locations = c.locations()
	return u
}

// update is the call as a permission request shows it.
func (c *call) update(status sdk.ToolCallStatus) sdk.ToolCallUpdate {
	return sdk.ToolCallUpdate{
		ToolCallId: c.id,
		Title:      sdk.Ptr(c.title),
		Kind:       sdk.Ptr(c.kind),
		Status:     sdk.Ptr(status),
		Locations:  c.locations(),
		RawInput:   c.input,
		Content:    c.content(),
		Meta:       c.meta,
	}
}

// finish is the update ending the call with its result: completed, or
// failed when the result is an error (a rejection among them). An edit
// keeps its diff; other calls show their result.
func (c *call) finish(result string, isError bool) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if isError {
		status = sdk.ToolCallStatusFailed
	}
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(result))}
	if c.diff != nil && !isError {
		content = c.diff
	}
	return sdk.UpdateToolCall(c.id, sdk.WithUpdateStatus(status), sdk.WithUpdateContent(content),
		sdk.WithUpdateRawOutput(map[string]any{"content": result, "is_error": isError}))
}

// traits is what the agent's tool of that name declares; nothing for an
// agent that does not tell.
func (ws *Workspace) traits(name string) tool.Traits {
	if ws.Traits == nil {
		return tool.Traits{}
	}
	return ws.Traits(name)
}

// kindOf is the ACP kind of a tool, by what it declares it does.
func kindOf(name string, tr tool.Traits) sdk.ToolKind {
	switch {
	case tr.RunsCommands:
		return sdk.ToolKindExecute
	case tr.EditsFiles:
		return sdk.ToolKindEdit
	case tr.ReadsFiles && name == filesystem.ReadFileTool:
		return sdk.ToolKindRead
	case tr.ReadsFiles:
		return sdk.ToolKindSearch // ls, glob, grep
	case name == todos.WriteTodosTool:
		return sdk.ToolKindThink
	case tr.Network:
		return sdk.ToolKindFetch
	case tr.ReadOnly:
		return sdk.ToolKindRead
	}
	return sdk.ToolKindOther
}

// replay is the updates that retell a thread's conversation: its user and
// agent messages and reasoning, its tool calls as they ended (no diffs:
// the files have changed since), and its plan.
func replay(snap *checkpoint.Snapshot, ws *Workspace) []sdk.SessionUpdate {
	results := map[string]llm.Message{}
	for _, m := range snap.Messages {
		if m.Role == llm.RoleTool {
			results[m.ToolCallID] = m
		}
	}
	var out []sdk.SessionUpdate
	for _, m := range snap.Messages {
		switch m.Role {
		case llm.RoleUser:
			if t := m.Text(); t != "" {
				out = append(out, sdk.UpdateUserMessageText(t))
			}
		case llm.RoleAssistant:
			for _, p := range m.Parts {
				switch {
				case p.Type == llm.PartReasoning && p.Text != "":
					out = append(out, sdk.UpdateAgentThoughtText(p.Text))
				case p.Type == llm.PartText && p.Text != "":
					out = append(out, sdk.UpdateAgentMessageText(p.Text))
				}
			}
			for _, tc := range m.ToolCalls {
				c, _ := describe(ws, tc.ID, tc.Name, tc.Args)
				if r, ok := results[tc.ID]; ok {
					out = append(out, c.start(sdk.ToolCallStatusInProgress), c.finish(r.Text(), r.IsError))
				} else {
					out = append(out, c.start(sdk.ToolCallStatusPending))
				}
			}
		}
	}
	if list, err := todos.Of(snap.Values); err == nil && len(list) > 0 {
		out = append(out, plan(list))
	}
	return out
}
