package main

import (
	_ "embed"
	"fmt"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents/thread"
)

//go:embed testdata/workspace.txtar
var workspaceArchive string

// workspaceTime is every file's creation and modification time, so that
// nothing the tools show depends on when the benchmark runs.
var workspaceTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// workspace returns the task's files, from the archive in testdata: a txtar
// archive (a comment, then each file after a "-- path --" line).
func workspace() (map[string]thread.FileData, error) {
	files := map[string]thread.FileData{}
	var name string
	var body strings.Builder
	flush := func() {
		if name != "" {
			files["/"+name] = thread.FileData{Content: body.String(), CreatedAt: workspaceTime, ModifiedAt: workspaceTime}
		}
		body.Reset()
	}
	for line := range strings.Lines(workspaceArchive) {
		trimmed := strings.TrimSuffix(line, "\n")
		if n, ok := strings.CutPrefix(trimmed, "-- "); ok && strings.HasSuffix(n, " --") {
			flush()
			name = strings.TrimSpace(strings.TrimSuffix(n, " --"))
			continue
		}
		if name != "" {
			body.WriteString(line)
		}
	}
	flush()
	for _, p := range readFiles {
		if _, ok := files[p]; !ok {
			return nil, fmt.Errorf("the workspace archive lacks %s", p)
		}
	}
	return files, nil
}
