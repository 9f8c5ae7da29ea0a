package workload

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// FilesPerDir is the number of files written into one directory before the
// workload moves on to the next, and so the most entries one ls lists.
const FilesPerDir = 10

// ContextWindow is the context window the scripted model declares: large
// enough that summarization never triggers.
const ContextWindow = 1 << 40

// Final is the text of the final answer.
const Final = "done"

// Usage is the usage each scripted turn reports.
var Usage = llm.Usage{InputTokens: 100, OutputTokens: 10}

// Dir returns the directory of the w-th write.
func Dir(w int) string { return dirOf(w, FilesPerDir) }

// Path returns the path of the w-th write.
func Path(w int) string { return pathOf(w, FilesPerDir) }

func dirOf(w, perDir int) string  { return "/d" + strconv.Itoa(w/perDir) }
func pathOf(w, perDir int) string { return dirOf(w, perDir) + "/f" + strconv.Itoa(w) + ".txt" }

// Content returns the content of the w-th write.
func Content(w int) string {
	return "file " + strconv.Itoa(w) + ": the quick brown fox jumps over the lazy dog\n"
}

// Call returns the tool call of step i.
func Call(i int) llm.ToolCall { return callOf(i, FilesPerDir) }

// callOf is step i's call with perDir files to a directory.
func callOf(i, perDir int) llm.ToolCall {
	w := i / 3
	var args any
	var name string
	switch i % 3 {
	case 0:
		name, args = "write_file", struct {
			FilePath string `json:"file_path"`
			Content  string `json:"content"`
		}{pathOf(w, perDir), Content(w)}
	case 1:
		name, args = "read_file", struct {
			FilePath string `json:"file_path"`
		}{pathOf(w, perDir)}
	default:
		name, args = "ls", struct {
			Path string `json:"path"`
		}{dirOf(w, perDir)}
	}
	b, _ := json.Marshal(args) // strings only: cannot fail
	return llm.ToolCall{ID: "call_" + strconv.Itoa(i), Name: name, Args: b}
}

// Turns returns the n tool turns and the final answer.
func Turns(n int) []replay.Turn {
	turns := make([]replay.Turn, 0, n+1)
	for i := range n {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{Call(i)}, Usage: Usage})
	}
	return append(turns, replay.Turn{Content: Final, Usage: Usage})
}

// Script returns the workload as a replay script (the format of
// docs/SCRIPTED_MODEL.md, for deepagents run --model replay:FILE).
func Script(n int) *replay.Script {
	return &replay.Script{ContextWindow: ContextWindow, Turns: Turns(n)}
}

// Canonical returns the workload as bench/compare compares it across
// implementations: one JSON object per line, {"id","name","args"} for each
// tool step and {"content"} for the final answer.
func Canonical(n int) []byte {
	var out []byte
	for i := range n {
		c := Call(i)
		out = fmt.Appendf(out, `{"id":%q,"name":%q,"args":%s}`+"\n", c.ID, c.Name, c.Args)
	}
	return fmt.Appendf(out, `{"content":%q}`+"\n", Final)
}

// Check verifies a finished run's conversation: one tool result per step,
// none an error, and the last read and listing showing what was written.
// It returns a description of the first problem, or nil.
func Check(n int, msgs []llm.Message) error {
	results := 0
	var lastRead, lastLs string
	for i := range msgs {
		m := &msgs[i]
		if m.Role != llm.RoleTool {
			continue
		}
		if m.IsError {
			return fmt.Errorf("workload: tool %s (%s) failed: %s", m.Name, m.ToolCallID, m.Text())
		}
		results++
		switch m.Name {
		case "read_file":
			lastRead = m.Text()
		case "ls":
			lastLs = m.Text()
		}
	}
	if results != n {
		return fmt.Errorf("workload: %d tool results, want %d", results, n)
	}
	return CheckResults(n, lastRead, lastLs)
}

// CheckResults checks the text of the last read_file and ls results of an
// n-step run (either may be empty when the run had no such step).
func CheckResults(n int, lastRead, lastLs string) error {
	if n >= 2 {
		w := (n - 2) / 3
		if want := "file " + strconv.Itoa(w) + ":"; !strings.Contains(lastRead, want) {
			return fmt.Errorf("workload: last read_file result %q does not contain %q", lastRead, want)
		}
	}
	if n >= 3 {
		w := (n - 3) / 3
		if want := "f" + strconv.Itoa(w) + ".txt"; !strings.Contains(lastLs, want) {
			return fmt.Errorf("workload: last ls result %q does not contain %q", lastLs, want)
		}
	}
	return nil
}
