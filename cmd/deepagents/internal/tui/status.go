package tui

import (
	"fmt"
	"strings"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// statusLine is the line under the input, always there: the model, the
// permission mode (mode; "" shows none), how much of the model's
// context window the main agent's last model call filled (as /context
// tells it in full), and what the session has cost so far (as /tokens
// tells it in full).
func (m *tuiModel) statusLine(mode string) string {
	parts := []string{display.OneLine(m.cfg.Model.Name)}
	if mode != "" {
		parts = append(parts, mode)
	}
	if fill := display.ContextFill(m.context); fill != "" {
		parts = append(parts, strings.TrimPrefix(fill, " · "))
	}
	switch cost, unpriced := m.session.Cost(m.prices); {
	case unpriced != "":
		parts = append(parts, "cost unknown (no price for "+display.OneLine(unpriced)+")")
	default:
		parts = append(parts, fmt.Sprintf("$%.4f", cost))
	}
	return strings.Join(parts, " · ")
}
