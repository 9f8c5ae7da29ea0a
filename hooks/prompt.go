package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/deepagents-go/deepagents/llm"
)

// A prompt hook (Hook.Prompt) is Claude Code's "prompt" handler: a model
// decides. Its prompt, $ARGUMENTS replaced by the event's JSON (or the
// JSON after it when it has no $ARGUMENTS), is sent to Config.Model in a
// call of its own, with no tools and none of the conversation; the answer
// is a JSON object: {"ok": false, "reason": "..."} blocks (a PreToolUse
// call is denied, a Stop sent back to work, a prompt dropped), {"ok":
// true} goes on. Claude Code's older {"decision": "block", "reason"} is
// read too, and systemMessage; nothing else (see promptAnswer). An answer that is not such an
// object, a model that fails or the timeout is a failed hook: a warning,
// never a block.

// PromptAgent names prompt hooks' model calls (a scripted model's turns,
// usage events).
const PromptAgent = "hook"

// promptSystem is the system prompt of a prompt hook's model call.
const promptSystem = `You decide for a hook of a coding agent. You are given an instruction and the event, as JSON. Answer with one JSON object and nothing else: {"ok": true} when the event may go on, or {"ok": false, "reason": "..."} when it must not, the reason saying what is wrong and what to do instead.`

// errNoModel is a prompt hook's error when the Runner has no model.
var errNoModel = errors.New("a prompt hook needs a model (hooks.Config.Model), and there is none")

// runPrompt asks the model about payload, as h's prompt says.
func (r *Runner) runPrompt(ctx context.Context, h compiled, payload []byte) outcome {
	if r.cfg.Model == nil {
		return outcome{fail: errNoModel.Error()}
	}
	text := h.Prompt
	if strings.Contains(text, "$ARGUMENTS") {
		text = strings.ReplaceAll(text, "$ARGUMENTS", string(payload))
	} else {
		text += "\n\n" + string(payload)
	}
	resp, err := llm.Generate(llm.WithAgent(ctx, PromptAgent), r.cfg.Model, &llm.Request{System: promptSystem, Messages: []llm.Message{llm.UserText(text)}})
	if ctx.Err() != nil {
		return ended(ctx, h)
	}
	if err != nil {
		return outcome{fail: err.Error()}
	}
	return promptAnswer(resp.Message.Text())
}

// promptAnswer reads a prompt hook's answer (a JSON object, perhaps in a
// code block) as an Output. Only ok (or Claude Code's older decision
// "block"), reason and systemMessage are read: the model reads text a
// repository may have planted (the call's arguments), so its answer may
// block, never allow a call, change its arguments or end the run.
func promptAnswer(text string) outcome {
	t := llm.Unfence(text)
	var a struct {
		OK            *bool  `json:"ok"`
		Decision      string `json:"decision"`
		Reason        string `json:"reason"`
		SystemMessage string `json:"systemMessage"`
	}
	if err := json.Unmarshal([]byte(t), &a); err != nil || !strings.HasPrefix(t, "{") {
		return outcome{fail: "the model's answer is not a JSON object: " + clipAnswer(text)}
	}
	out := &Output{SystemMessage: a.SystemMessage}
	if a.OK != nil && !*a.OK || a.OK == nil && a.Decision == "block" {
		out.Decision, out.Reason = "block", a.Reason
	}
	return outcome{out: out}
}

func clipAnswer(s string) string {
	if s = strings.TrimSpace(s); len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
