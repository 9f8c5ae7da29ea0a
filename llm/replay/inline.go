package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/deepagents-go/deepagents/llm"
)

// ErrNoInlineScript is the error of an Inline model whose conversation
// holds no script.
var ErrNoInlineScript = errors.New(`replay: inline: no user message is a script (a JSON object with "turns")`)

// Inline is a scripted model that takes its script from the conversation:
// the last user message whose text is a script in the format of a script
// file (docs/SCRIPTED_MODEL.md) gives it, and a call is answered with the
// turn whose number is the count of assistant messages after that message. Each
// thread thus carries its own script, which is what a test of a server
// needs: every client request scripts its own thread, and runs on several
// threads at once do not share one script.
//
// The CLI reaches it as --model replay:inline. Turns are played for
// whichever agent calls; a turn's agent field and the script's defaults
// are ignored.
type Inline struct{}

// Info implements llm.Describer.
func (Inline) Info() llm.Info { return llm.Info{Provider: "replay", Name: "inline"} }

// Stream implements llm.Model.
func (Inline) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	// The last user message that is a script: the user messages after it
	// that are not (a message sent while the agent worked) are part of
	// its turns' conversation.
	last := -1
	var s Script
	for i := len(req.Messages) - 1; i >= 0 && last < 0; i-- {
		if req.Messages[i].Role == llm.RoleUser && json.Unmarshal([]byte(req.Messages[i].Text()), &s) == nil && s.Turns != nil {
			last = i
		}
	}
	if last < 0 {
		return fail(ErrNoInlineScript)
	}
	k := 0
	for _, m := range req.Messages[last+1:] {
		if m.Role == llm.RoleAssistant {
			k++
		}
	}
	if k >= len(s.Turns) {
		return fail(fmt.Errorf("%w: call %d after the script's message, which has %d turn(s)", ErrExhausted, k+1, len(s.Turns)))
	}
	t := s.Turns[k]
	t.Agent = llm.AgentFromContext(ctx)
	// Calls without an id get one unique within the thread.
	t.ToolCalls = append([]llm.ToolCall(nil), t.ToolCalls...)
	for j := range t.ToolCalls {
		if t.ToolCalls[j].ID == "" {
			t.ToolCalls[j].ID = "call_" + strconv.Itoa(last) + "_" + strconv.Itoa(k+1) + "_" + strconv.Itoa(j+1)
		}
	}
	return New(t).Stream(ctx, req)
}

func fail(err error) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) { yield(llm.Chunk{}, err) }
}
