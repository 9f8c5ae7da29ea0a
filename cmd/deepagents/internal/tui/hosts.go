package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
	"github.com/deepagents-go/deepagents/netproxy"
)

// HostQuestion is a sandboxed command's wish to reach a host no rule
// names (package netproxy), asked while the command runs: the person
// allows it once (for the command), for the thread, always, or not.
type HostQuestion struct {
	Host    string
	Port    int
	Command string
	// Answer is called once, with the person's answer.
	Answer func(netproxy.Answer)
	// Withdrawn is closed when the question needs no answer any more
	// (its command ended).
	Withdrawn <-chan struct{}
}

type (
	// hostQuestionMsg is a question come in; hostWithdrawnMsg one
	// withdrawn, by its number.
	hostQuestionMsg  struct{ q *askedHost }
	hostWithdrawnMsg struct{ n int }
)

// askedHost is a question as the session holds it, numbered.
type askedHost struct {
	HostQuestion
	n int
}

// hostKeys are the keys of the host question, and their answers.
var hostKeys = map[string]netproxy.Answer{
	"o": netproxy.AllowOnce, "y": netproxy.AllowOnce, // not enter: a key typed for the input must not allow
	"t": netproxy.AllowThread, "a": netproxy.AllowAlways,
	"d": netproxy.Deny, "n": netproxy.Deny, "esc": netproxy.Deny,
}

// forwardHostQuestions passes the questions of qs to the session, and
// each one's withdrawal, until done.
func forwardHostQuestions(qs <-chan HostQuestion, send func(tea.Msg), done <-chan struct{}) {
	n := 0
	for {
		select {
		case q := <-qs:
			n++
			a := &askedHost{HostQuestion: q, n: n}
			send(hostQuestionMsg{a})
			if q.Withdrawn != nil {
				go func() {
					select {
					case <-q.Withdrawn:
						send(hostWithdrawnMsg{a.n})
					case <-done:
					}
				}()
			}
		case <-done:
			return
		}
	}
}

// onHostQuestion queues a question; the first one shows.
func (m *tuiModel) onHostQuestion(q *askedHost) tea.Cmd {
	m.hosts = append(m.hosts, q)
	if len(m.hosts) == 1 {
		m.hostAsked = time.Now()
		return tea.Tick(approvalGrace, func(time.Time) tea.Msg { return approvalReadyMsg{} })
	}
	return nil
}

// onHostWithdrawn drops a question whose command ended.
func (m *tuiModel) onHostWithdrawn(n int) tea.Cmd {
	for i, q := range m.hosts {
		if q.n == n {
			m.hosts = append(m.hosts[:i], m.hosts[i+1:]...)
			if i == 0 {
				m.hostAsked = time.Now()
			}
			return m.print(dim.Render("· the question about " + hostLabel(q.HostQuestion) + " ended with its command"))
		}
	}
	return nil
}

// hostTakes reports whether k answers the host question shown: as an
// approval's keys, only on an empty input, once it has been on the screen
// a moment.
func (m *tuiModel) hostTakes(k tea.KeyPressMsg) bool {
	if _, ok := hostKeys[strings.ToLower(k.String())]; !ok {
		return false
	}
	return m.input.Value() == "" && (k.String() == "esc" || time.Since(m.hostAsked) >= approvalGrace)
}

// onHostKey answers the question shown.
func (m *tuiModel) onHostKey(k tea.KeyPressMsg) tea.Cmd {
	a := hostKeys[strings.ToLower(k.String())]
	q := m.hosts[0]
	m.hosts = m.hosts[1:]
	m.hostAsked = time.Now()
	q.Answer(a)
	line := green.Render("✓ network: "+hostLabel(q.HostQuestion)) + " " + map[netproxy.Answer]string{
		netproxy.AllowOnce:   "allowed for this command",
		netproxy.AllowThread: "allowed for this thread",
		netproxy.AllowAlways: "allowed always (sandbox.allow_domains of ~/.deepagents/config.yaml)",
	}[a]
	if a == netproxy.Deny {
		line = red.Render("✗ network: " + hostLabel(q.HostQuestion) + " refused")
	}
	return m.print(line)
}

// hostView shows the question first in line.
func (m *tuiModel) hostView() string {
	q := m.hosts[0]
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", yellow.Render("?"), bold.Render("the command wants to reach "+hostLabel(q.HostQuestion)), dim.Render(fmt.Sprintf("(%d waiting)", len(m.hosts))))
	b.WriteString(fit(dim.Render("  $ "+display.Clip(display.OneLine(q.Command), max(m.width-6, 20))), m.width) + "\n")
	if time.Since(m.hostAsked) < approvalGrace {
		return b.String() + bold.Render("allow?") + "\n"
	}
	b.WriteString(keyLine("allow? ", []string{"[o] once", "[t] for this thread", "[a] always", "[d] no"}, m.width))
	return b.String()
}

// hostLabel names q's host, with its port when it is not 80 or 443.
func hostLabel(q HostQuestion) string {
	h := display.TerminalSafe(q.Host)
	if q.Port != 80 && q.Port != 443 {
		h = fmt.Sprintf("%s:%d", h, q.Port)
	}
	return h
}
