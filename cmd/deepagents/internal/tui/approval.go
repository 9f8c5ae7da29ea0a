package tui

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/deepagents-go/deepagents"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/middleware/hitl"
)

// approval is a request for approval as the session asks it, a
// component of its own (as the pickers are): the requests asked about,
// the decisions taken so far, and what is being typed for the next (a
// rejection's reason, or edited arguments). It takes the keys the
// session gives it and says what they did (approvalStep); the session
// acts on that: it prints, remembers a tool approved for the session,
// sets a plan's mode, and hands the decisions on once every request has
// one (resuming the run, or answering a background task).
type approval struct {
	reqs      []deepagents.ActionRequest
	decisions []deepagents.Decision
	// plans says a plan (hitl.ExitPlanTool) asks as one: its own keys,
	// which set the permission mode (the main run's approvals).
	plans bool
	// shown is the request drawn last (at), for a window's width, kept
	// while it stays the same.
	shown struct {
		at    int
		width int
		text  string
	}
	reason  *textinput.Model
	editing bool
	editErr string // why the edited arguments were refused
	// asked is when the request asked about now was shown.
	asked time.Time
	// noLater leaves esc (later) out of the keys shown: it is not the
	// approval's now (a background task's, while the run works).
	noLater bool
}

// approvalStep is what a key did to an approval, for the session to act
// on.
type approvalStep struct {
	// line is what to print above the view ("" for nothing).
	line string
	// decided says a decision was taken: the next request asks, or
	// every request has its decision.
	decided bool
	// allow is a tool the user approved for the whole session.
	allow string
	// mode is the permission mode a plan's approval turns on.
	mode hitl.Mode
	// later says the user left the approval waiting (esc).
	later bool
	// cmd is the reason's input's.
	cmd tea.Cmd
}

// set asks about reqs, anew.
func (a *approval) set(reqs []deepagents.ActionRequest) {
	a.reqs, a.decisions = reqs, nil
	a.shown.text = ""
	a.reason, a.editing, a.editErr = nil, false, ""
}

// clear drops the requests: nothing is asked.
func (a *approval) clear() { a.set(nil) }

// waiting reports whether requests wait on the approval.
func (a *approval) waiting() bool { return len(a.reqs) > 0 }

// asking reports whether a request waits for its decision.
func (a *approval) asking() bool { return len(a.reqs) > len(a.decisions) }

// typing reports whether a reason or arguments are being typed: every
// key is theirs.
func (a *approval) typing() bool { return a.reason != nil }

// current is the request asked about (asking must hold).
func (a *approval) current() deepagents.ActionRequest { return a.reqs[len(a.decisions)] }

// approveAllowed approves the requests next in line whose tools the user
// approved for the session.
func (a *approval) approveAllowed(allowed map[string]bool) {
	for a.asking() && allowed[a.current().Tool] {
		a.decisions = append(a.decisions, deepagents.Decision{Type: deepagents.DecisionApprove})
	}
}

// show shows the next request: its keys once it has been seen
// (approvalGrace), when the returned command's message comes.
func (a *approval) show() tea.Cmd {
	a.asked = time.Now()
	return tea.Tick(approvalGrace, func(time.Time) tea.Msg { return approvalReadyMsg{} })
}

// take returns the decisions, one per request, and asks nothing more.
func (a *approval) take() []deepagents.Decision {
	ds := a.decisions
	a.clear()
	return ds
}

// takes reports whether k answers the approval asked for, input being
// what the session's input holds: only a key pressed on an empty input,
// once the approval has been on the screen a moment, does; other keys
// are typing. A key typed ahead, meant for the input, never answers it.
func (a *approval) takes(k tea.KeyPressMsg, input string) bool {
	if k.String() == "esc" || k.String() == "ctrl+c" {
		return input == ""
	}
	return input == "" && time.Since(a.asked) >= approvalGrace
}

// onKey decides the request asked about: y approves it, a approves its
// tool for the session, e edits its arguments, n rejects it with a
// reason; a decision the request does not allow is no key. While a
// reason or arguments are typed, the keys are theirs.
func (a *approval) onKey(k tea.KeyPressMsg, width int) approvalStep {
	if a.reason != nil {
		return a.onReasonKey(k)
	}
	req := a.current()
	key := strings.ToLower(k.String())
	if d, ok := decisionKeys[key]; ok && !allows(req, d) {
		return approvalStep{}
	}
	if a.plans && req.Tool == hitl.ExitPlanTool {
		if s, ok := a.onPlanKey(key, width); ok {
			return s
		}
	}
	switch key {
	case "y", "enter":
		a.decide(deepagents.Decision{Type: deepagents.DecisionApprove})
		return approvalStep{line: green.Render("✓ approved ") + req.Tool, decided: true}
	case "a":
		a.decide(deepagents.Decision{Type: deepagents.DecisionApprove})
		return approvalStep{line: green.Render("✓ approved ") + req.Tool + " for this session", decided: true, allow: req.Tool}
	case "n":
		a.askReason(width)
	case "e":
		ti := textinput.New()
		ti.Prompt = "args> "
		ti.SetValue(string(req.Args))
		ti.Focus()
		a.reason, a.editing, a.editErr = &ti, true, ""
		a.reason.SetWidth(a.reasonWidth(width))
	case "ctrl+c", "esc":
		// Left waiting: the session says how it is answered later.
		return approvalStep{later: true}
	}
	return approvalStep{}
}

// onPlanKey decides a plan's approval: y approves it and turns accept
// edits on, m approves it and asks before edits; n rejects it, with
// feedback, and plan mode stays on. ok is false for the keys it leaves to
// the other approvals (esc, ctrl+c).
func (a *approval) onPlanKey(key string, width int) (s approvalStep, ok bool) {
	switch key {
	case "y", "enter", "m":
		mode := hitl.ModeAcceptEdits
		if key == "m" {
			mode = hitl.ModeAsk
		}
		a.decide(deepagents.Decision{Type: deepagents.DecisionApprove})
		return approvalStep{line: green.Render("✓ plan approved") + dim.Render(" · "+modeName[mode]), decided: true, mode: mode}, true
	case "n":
		a.askReason(width)
		return approvalStep{}, true
	case "esc", "ctrl+c":
		return approvalStep{}, false
	}
	return approvalStep{}, true // no other key answers a plan
}

// decide takes d for the request asked about.
func (a *approval) decide(d deepagents.Decision) { a.decisions = append(a.decisions, d) }

// askReason asks the reason of a rejection.
func (a *approval) askReason(width int) {
	ti := textinput.New()
	ti.Prompt = "reason> "
	ti.Placeholder = reasonHint
	ti.Focus()
	a.reason = &ti
	a.reason.SetWidth(a.reasonWidth(width))
}

func (a *approval) onReasonKey(k tea.KeyPressMsg) approvalStep {
	switch k.String() {
	case "enter":
		req := a.current()
		if a.editing {
			return a.onEdited(req)
		}
		reason := strings.TrimSpace(a.reason.Value())
		a.reason = nil
		a.decide(deepagents.Decision{Type: deepagents.DecisionReject, Message: reason})
		line := red.Render("✗ rejected ") + req.Tool
		if a.plans && req.Tool == hitl.ExitPlanTool {
			line = red.Render("✗ plan rejected") + dim.Render(" · plan mode stays on")
		}
		if reason != "" {
			line += ": " + reason
		}
		return approvalStep{line: line, decided: true}
	case "esc", "ctrl+c":
		a.reason, a.editing, a.editErr = nil, false, ""
		return approvalStep{}
	}
	r, cmd := a.reason.Update(k)
	a.reason = &r
	return approvalStep{cmd: cmd}
}

// onEdited takes the edited arguments when they are a JSON object, and
// otherwise says why not and keeps them for more editing.
func (a *approval) onEdited(req deepagents.ActionRequest) approvalStep {
	args := json.RawMessage(strings.TrimSpace(a.reason.Value()))
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		a.editErr = "the arguments must be a JSON object"
		if err != nil {
			a.editErr += ": " + err.Error()
		}
		return approvalStep{}
	}
	a.reason, a.editing, a.editErr = nil, false, ""
	a.decide(deepagents.Decision{Type: deepagents.DecisionEdit, Args: args})
	return approvalStep{line: yellow.Render("✎ edited ") + req.Tool + dim.Render(" "+display.Clip(string(args), 100)), decided: true}
}

// paste gives a paste to the reason's input, when one is typed.
func (a *approval) paste(msg tea.PasteMsg) tea.Cmd {
	r, cmd := a.reason.Update(msg)
	a.reason = &r
	return cmd
}

// resize fits the reason's input to a window width columns wide.
func (a *approval) resize(width int) {
	if a.reason != nil {
		a.reason.SetWidth(a.reasonWidth(width))
	}
}

// reasonWidth is the width of the reason's or the arguments' input: the
// window's, less its prompt and the cursor.
func (a *approval) reasonWidth(width int) int {
	if width <= 0 {
		return 0 // as wide as it needs
	}
	return max(width-lipgloss.Width(a.reason.Prompt)-1, 10)
}

// request is the request asked about, drawn once for its window's width,
// with the file it changes as it was (befores, by call id).
func (a *approval) request(req deepagents.ActionRequest, befores map[string]before, width int) string {
	if a.shown.at == len(a.decisions) && a.shown.width == width && a.shown.text != "" {
		return a.shown.text
	}
	b := befores[req.ToolCallID]
	a.shown.at, a.shown.width, a.shown.text = len(a.decisions), width, renderApproval(req, b.text, b.known, width)
	return a.shown.text
}

// view is the approval asked for (asking must hold): the request, then
// what is being typed or the keys. input is what the session's input
// holds (the keys wait for it to be empty).
func (a *approval) view(befores map[string]before, input string, width int) string {
	var b strings.Builder
	req := a.current()
	if a.plans && req.Tool == hitl.ExitPlanTool {
		b.WriteString(yellow.Render("?") + " " + bold.Render("the plan above") + dim.Render(" · approving it leaves plan mode") + "\n")
	} else {
		b.WriteString(a.request(req, befores, width))
	}
	switch {
	case a.editing:
		if a.editErr != "" {
			b.WriteString(red.Render(a.editErr) + "\n")
		}
		b.WriteString(a.reason.View() + "\n" + dim.Render("enter runs the call with these arguments; esc goes back") + "\n")
	case a.reason != nil:
		// The hint inside the input when it fits there, under it when not.
		if width <= 0 || lipgloss.Width(reasonHint) <= a.reason.Width() {
			a.reason.Placeholder = reasonHint
			b.WriteString(inputView(*a.reason) + "\n")
		} else {
			a.reason.Placeholder = ""
			b.WriteString(a.reason.View() + "\n" + fit(dim.Render(reasonHint), width) + "\n")
		}
	case time.Since(a.asked) < approvalGrace:
		// Keys pressed now are typing: the keys show once they answer.
		b.WriteString(bold.Render("approve?") + "\n")
	case a.plans && req.Tool == hitl.ExitPlanTool:
		b.WriteString(planKeys(width))
	default:
		b.WriteString(approvalKeysLater(req, width, !a.noLater))
		if input != "" {
			b.WriteString(fit(dim.Render("(the approval takes its keys once the input is empty)"), width) + "\n")
		}
	}
	return b.String()
}

// decisionKeys are the approval keys that take a decision, by the decision
// they take.
var decisionKeys = map[string]deepagents.DecisionType{
	"y": deepagents.DecisionApprove, "enter": deepagents.DecisionApprove, "a": deepagents.DecisionApprove,
	"e": deepagents.DecisionEdit, "n": deepagents.DecisionReject,
}

// allows reports whether req may be decided with d (an empty Allowed allows
// every decision).
func allows(req deepagents.ActionRequest, d deepagents.DecisionType) bool {
	return len(req.Allowed) == 0 || slices.Contains(req.Allowed, d)
}

// reasonHint says what a rejection's reason is for.
const reasonHint = "what the agent should do instead (enter to skip)"

// approvalKeys names the keys of the decisions req allows, the line
// wrapped between keys to width (0: no wrapping).
func approvalKeys(req deepagents.ActionRequest, width int) string {
	return approvalKeysLater(req, width, true)
}

// approvalKeysLater is approvalKeys, with esc (later) among the keys when
// later holds.
func approvalKeysLater(req deepagents.ActionRequest, width int, later bool) string {
	var keys []string
	for _, k := range []struct {
		d     deepagents.DecisionType
		label string
	}{
		{deepagents.DecisionApprove, "[y] yes  [a] yes, and this tool for the session"},
		{deepagents.DecisionEdit, "[e] edit"},
		{deepagents.DecisionReject, "[n] no, with a reason"},
	} {
		if allows(req, k.d) {
			keys = append(keys, k.label)
		}
	}
	if later {
		keys = append(keys, "[esc] later")
	}
	return keyLine("approve? ", keys, width)
}
