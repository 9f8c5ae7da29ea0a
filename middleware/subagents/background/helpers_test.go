package background_test

import (
	"context"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/thread"
	"github.com/deepagents-go/deepagents/tool"
)

// noteTool writes a note file (as in package subagents' tests).
func noteTool() tool.Tool {
	type in struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	return tool.Must(tool.New("note", "Write a note file.", func(ctx context.Context, x in) (string, error) {
		agent.RuntimeFromContext(ctx).Files().Put(x.Path, thread.FileData{Content: x.Content, CreatedAt: time.Now(), ModifiedAt: time.Now()})
		return "noted", nil
	}))
}
