package workload

import (
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// The growing workload is the bounded one's steps with every file written
// into one directory, /d0, so that each ls lists every file written so far,
// as the folders of real agents grow. Its turns report no usage and its
// script declares no context window, so the agent runs with the replay
// model's default window and its own estimate of the context's size: the
// conversation crosses the summarization trigger, again and again in long
// runs. bench/longrun runs it through the CLI, with summaries that succeed
// (the script gives the summarizer a default reply) and with summaries
// that fail (no reply: every summary call is an error, so the agent backs
// off and, past the window, drops the oldest messages).

// GrowingFilesPerDir is the growing workload's files per directory: more
// than any run writes, so all go to /d0. bench/eino takes it as
// -files-per-dir.
const GrowingFilesPerDir = 1 << 30

// GrowingSummary is the summarizer's reply in runs whose summaries succeed.
const GrowingSummary = "Summary: the agent has been writing files f0.txt, f1.txt, ... into /d0, reading each back and listing /d0 after each write."

// GrowingCall returns the tool call of step i of the growing workload.
func GrowingCall(i int) llm.ToolCall { return callOf(i, GrowingFilesPerDir) }

// GrowingScript returns n steps of the growing workload and the final
// answer as a replay script; summaries says whether the summarizer answers.
func GrowingScript(n int, summaries bool) *replay.Script {
	turns := make([]replay.Turn, 0, n+1)
	for i := range n {
		turns = append(turns, replay.Turn{ToolCalls: []llm.ToolCall{GrowingCall(i)}})
	}
	s := &replay.Script{Turns: append(turns, replay.Turn{Content: Final})}
	if summaries {
		s.Defaults = map[string]replay.Turn{"summarizer": {Content: GrowingSummary}}
	}
	return s
}
