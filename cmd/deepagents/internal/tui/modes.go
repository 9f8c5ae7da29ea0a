package tui

import (
	"encoding/json"

	"github.com/deepagents-go/deepagents"

	"charm.land/lipgloss/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/middleware/hitl"
)

// This file holds the session's permission modes: the line under the
// input that says which one is on, shift+tab's cycle, and the approval of
// a plan (hitl.ExitPlanTool), which leaves plan mode.

var (
	cyan    = lipgloss.NewStyle().Foreground(lipgloss.Color("6"))
	magenta = lipgloss.NewStyle().Foreground(lipgloss.Color("5"))
)

// setMode changes the permission mode, for the runs from now on.
func (m *tuiModel) setMode(mode hitl.Mode) {
	m.mode = mode
	if m.cfg.SetMode != nil {
		m.cfg.SetMode(mode)
	}
}

// modeLine says which permission mode is on, under the input.
func (m *tuiModel) modeLine() string {
	const cycle = " (shift+tab to cycle)"
	var s string
	switch m.mode {
	case hitl.ModeAcceptEdits:
		s = magenta.Render("⏵⏵ accept edits on") + dim.Render(cycle)
	case hitl.ModePlan:
		s = cyan.Render("⏸ plan mode on") + dim.Render(" (read-only until you approve a plan; shift+tab to cycle)")
	case hitl.ModeAuto:
		s = yellow.Render("⏵⏵⏵ auto mode: a classifier decides what would ask") + dim.Render(cycle)
	case hitl.ModeBypass:
		s = red.Render("⏵⏵⏵ bypass permissions: only ask rules ask") + dim.Render(cycle)
	default:
		s = dim.Render("ask before edits and commands" + cycle)
	}
	return fit(s, m.width)
}

// renderPlan is a plan the model presents (exit_plan_mode's plan), in
// Markdown, under a header.
func renderPlan(req deepagents.ActionRequest, width int) string {
	var args struct {
		Plan string `json:"plan"`
	}
	_ = json.Unmarshal(req.Args, &args)
	head := yellow.Render("?") + " " + bold.Render("plan") + dim.Render(" · the agent asks to leave plan mode with it")
	return head + "\n" + renderMarkdown(display.TerminalSafe(args.Plan), width)
}

// planKeys are the keys of a plan's approval.
func planKeys(width int) string {
	return keyLine("approve the plan? ", []string{"[y] yes, and accept edits", "[m] yes, and ask before edits", "[n] no, keep planning", "[esc] later"}, width)
}

// modeName names the modes for the user.
var modeName = map[hitl.Mode]string{
	hitl.ModeAsk:         "ask before edits and commands",
	hitl.ModeAcceptEdits: "accept edits on",
	hitl.ModePlan:        "plan mode on",
	hitl.ModeAuto:        "auto mode (a classifier decides)",
	hitl.ModeBypass:      "bypass permissions (nothing asks)",
}
