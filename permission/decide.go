package permission

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// ruleWords returns the words of an execute rule's pattern: one simple
// command of plain words (quotes allowed, nothing the shell expands).
func ruleWords(pattern string) ([]string, bool) {
	if len(pattern) > MaxCommandBytes || nesting(pattern) > maxNesting {
		return nil, false
	}
	f, err := parse(pattern)
	if err != nil || len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(st.Redirs) > 0 || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil, false
	}
	sc := &scope{src: pattern}
	var words []string
	for _, x := range sc.words(call.Args) {
		if x.exp {
			return nil, false
		}
		words = append(words, x.s)
	}
	return words, true
}

// match is how a rule's words meet a command's.
type match int

const (
	noMatch match = iota
	// mayMatch: a word the shell expands stands where the rule needs a
	// literal one, or the command gets arguments at run time.
	mayMatch
	fullMatch
)

// matchCommand matches a rule's words against a command's: word by word,
// the first one by base name when the rule's has no slash (rm matches
// /bin/rm). An expanded word may become any number of words, so from the
// first one on the match is at best mayMatch.
func matchCommand(rule []string, c *Command) match {
	expanded := false
	for _, e := range c.expanded {
		expanded = expanded || e
	}
	for i, rw := range rule {
		if i >= len(c.Args) {
			if c.moreArgs || expanded {
				return mayMatch
			}
			return noMatch
		}
		if c.expanded[i] {
			return mayMatch
		}
		got := c.Args[i]
		if i == 0 && !strings.Contains(rw, "/") {
			got = baseName(got)
		}
		if got != rw {
			return noMatch
		}
	}
	return fullMatch
}

// mentionsOK are programs that take a command's name as data, not to
// run it: a deny rule's command among their arguments is not a sign of a
// wrapper (git rm is git's own).
var mentionsOK = map[string]bool{
	"echo": true, "printf": true, "man": true, "info": true, "help": true, "which": true, "whereis": true,
	"type": true, "whatis": true, "apropos": true, "tldr": true, "git": true, "grep": true, "egrep": true,
	"fgrep": true, "rg": true, "cat": true, "ls": true, "test": true, "[": true, "true": true, "false": true,
	":": true, "command": true, "hash": true, "alias": true, "unalias": true, "export": true, "declare": true,
	"local": true, "readonly": true, "typeset": true, "trap": true, "eval": true,
}

// Bounds on the arguments mentions parses as command lines.
const (
	// mentionBytes bounds the bytes parsed for one decision; past it an
	// argument that may hold a denied command is taken as holding one.
	mentionBytes = MaxCommandBytes
	// mentionDepth bounds arguments parsed inside arguments.
	mentionDepth = 3
	// mentionSplits bounds the values after an = tried in one argument.
	mentionSplits = 3
	// parseCost is what one parse costs beyond its bytes, in bytes: a
	// parser and a walker are set up for each.
	parseCost = 256
)

// plainWordNot are the characters that make text more than one literal
// word to the shell.
const plainWordNot = " \t\n;&|<>()$`'\"\\{}[]*?~=#!"

// mentioner looks for a deny rule's words among the arguments of
// commands, within one decision's budget of parsing.
type mentioner struct {
	budget int // bytes still to parse
}

// mentions reports whether a deny rule's words appear among the
// arguments of a command that is not known to take names as data:
// a program the rules do not know as an exec wrapper (numactl -N 0 rm x,
// npx, uv run, docker exec) may run them, so the line is asked about
// rather than allowed or left to the default. They appear as literal
// words in a row, or in an argument that is itself a command line, whole
// or after an = (sg grp 'rm x', sed 'e rm x', tar --to-command='rm x',
// tar --checkpoint-action=exec='rm x'): there a command of the line it
// parses as must match the rule, or mention it in turn.
func (m *mentioner) mentions(rule []string, c *Command, depth int) bool {
	if len(rule) == 0 || len(c.Args) == 0 || mentionsOK[baseName(c.Args[0])] {
		return false
	}
	for i := 1; i+len(rule) <= len(c.Args); i++ {
		if inRow(rule, c, i) {
			return true
		}
	}
	if depth >= mentionDepth {
		return false
	}
	for i := 1; i < len(c.Args); i++ {
		if c.expanded[i] {
			continue // matched as written above; its text is not the value
		}
		s := c.Args[i]
		for split := 0; ; split++ {
			if !mayContain(s, rule[0]) {
				break // nor does any text after an = in it
			}
			if m.runs(rule, s, depth) {
				return true
			}
			// The value of --opt=VALUE, key=VALUE, --opt=exec=VALUE: an =
			// before any blank, a few deep. (An = further on is inside
			// the value, which was just parsed whole.)
			eq := strings.IndexByte(s, '=')
			if eq < 0 || split == mentionSplits || strings.ContainsAny(s[:eq], " \t\n") {
				break
			}
			s = s[eq+1:]
		}
	}
	return false
}

// inRow reports whether the rule's words stand as literal words in a
// row in c's arguments from index i.
func inRow(rule []string, c *Command, i int) bool {
	for j, rw := range rule {
		got := c.Args[i+j]
		if c.expanded[i+j] {
			return false
		}
		if j == 0 && !strings.Contains(rw, "/") {
			got = baseName(got)
		}
		if got != rw {
			return false
		}
	}
	return true
}

// mayContain reports whether text could spell the word once the shell
// removes its quotes and backslashes: a cheap test before parsing it.
func mayContain(text, w string) bool {
	if strings.Contains(text, w) {
		return true
	}
	if !strings.ContainsAny(text, `\'"`) {
		return false
	}
	return strings.Contains(strings.NewReplacer(`\`, "", `'`, "", `"`, "").Replace(text), w)
}

// runs reports whether s parses as a command line of which a command
// fully matches the rule or mentions it. A command the shell expands is
// not taken as a match: arguments full of $1 (awk, sed, jq) are not run
// by a shell.
func (m *mentioner) runs(rule []string, s string, depth int) bool {
	if !strings.ContainsAny(s, plainWordNot) {
		// One plain word (the common case): a command of that word alone.
		got := s
		if !strings.Contains(rule[0], "/") {
			got = baseName(s)
		}
		return len(rule) == 1 && got == rule[0]
	}
	if m.budget -= len(s) + parseCost; m.budget < 0 {
		return true // too much to parse: taken as a mention, so asked about
	}
	cmds, err := Commands(s)
	if err != nil {
		return false // not a command line
	}
	for i := range cmds {
		if matchCommand(rule, &cmds[i]) == fullMatch || m.mentions(rule, &cmds[i], depth+1) {
			return true
		}
	}
	return false
}

// decideCommand applies execute rules to a command line: deny if any
// command it can run is denied, ask if any is asked about or cannot be
// known, allow only if every one is allowed (exec wrappers that only run
// the command after them need no rule of their own) and runs in an
// unchanged environment; otherwise no rule decides.
// decideCommand decides an execute call by the rules on execute, cmds
// the commands of its line, parsed when first asked for.
func decideCommand(rules []*Rule, cmds func() ([]Command, error)) Decision {
	if len(rules) == 0 {
		return Decision{}
	}
	d := strongest(rules, func(r *Rule) bool { return r.Pattern == "" })
	if d.Effect == Deny {
		return d
	}
	if !slices.ContainsFunc(rules, func(r *Rule) bool { return r.Pattern != "" || r.Effect != Allow }) {
		return d // only "allow execute": every command is allowed, known or not
	}
	line, err := cmds()
	if errors.Is(err, errNotCommand) {
		return Decision{Effect: Ask, Reason: "the arguments are not a command"}
	}
	if err != nil {
		return Decision{Effect: Ask, Reason: "the command cannot be checked against the rules: " + err.Error()}
	}
	var ask, allow *Decision
	m := &mentioner{budget: mentionBytes}
	decided := 0 // commands that need a rule and are allowed
	needed := 0  // commands that need an allow rule
	for i := range line {
		d, needsAllow := decideOne(rules, &line[i], m)
		switch {
		case d.Effect == Deny:
			return d
		case d.Effect == Ask && ask == nil:
			ask = &d
		case d.Effect == Allow && allow == nil:
			allow = &d
		}
		if needsAllow {
			needed++
			if d.Effect == Allow {
				decided++
			}
		}
	}
	switch {
	case ask != nil:
		return *ask
	case needed > 0 && decided == needed && allow != nil:
		return *allow
	}
	return Decision{}
}

// decideOne returns what the rules make of one command, and whether the
// line's allowance needs it to be allowed.
func decideOne(rules []*Rule, c *Command, men *mentioner) (Decision, bool) {
	var deny, maybeDeny, ask, allow *Rule
	mentioned := false // maybeDeny's words are among the arguments
	for _, r := range rules {
		if r.Pattern == "" {
			if r.Effect == Ask && ask == nil {
				ask = r
			} else if r.Effect == Allow && allow == nil {
				allow = r
			}
			continue
		}
		m, mention := matchCommand(r.words, c), false
		if m == noMatch && r.Effect == Deny && men.mentions(r.words, c, 0) {
			m, mention = mayMatch, true
		}
		switch {
		case m == noMatch:
		case r.Effect == Deny && m == fullMatch:
			if deny == nil {
				deny = r
			}
		case r.Effect == Deny:
			if maybeDeny == nil {
				maybeDeny, mentioned = r, mention
			}
		case r.Effect == Ask:
			if ask == nil {
				ask = r
			}
		case r.Effect == Allow && m == fullMatch:
			if allow == nil {
				allow = r
			}
		}
	}
	what := strings.Join(c.Args, " ")
	if c.Maybe {
		// Text that may run as code: it can only make the line asked about.
		switch {
		case deny != nil || maybeDeny != nil || ask != nil:
			r := firstOf(deny, maybeDeny, ask)
			return Decision{Effect: Ask, Rule: r, Reason: "the rule " + r.String() + " may match " + quote(what) + ", in a string the command may run as code"}, false
		}
		return Decision{}, false
	}
	switch {
	case deny != nil:
		return Decision{Effect: Deny, Rule: deny, Reason: "the rule " + deny.String()}, true
	case c.Unsure != "":
		return Decision{Effect: Ask, Reason: "the command cannot be checked against the rules: " + quote(what) + ": " + c.Unsure}, true
	case maybeDeny != nil && mentioned:
		return Decision{Effect: Ask, Rule: maybeDeny, Reason: "the rule " + maybeDeny.String() + " may match what " + quote(what) + " runs"}, true
	case maybeDeny != nil:
		return Decision{Effect: Ask, Rule: maybeDeny, Reason: "the rule " + maybeDeny.String() + " may match " + quote(what) + " once the shell expands it"}, true
	case ask != nil:
		return Decision{Effect: Ask, Rule: ask, Reason: "the rule " + ask.String()}, true
	case c.wrapper:
		return Decision{}, false
	case allow != nil && (c.Assigned || c.Writes) && allow.Pattern != "":
		return Decision{}, true // a changed environment, or a file written: the allow rule does not apply
	case allow != nil:
		return Decision{Effect: Allow, Rule: allow, Reason: "the rule " + allow.String()}, true
	}
	return Decision{}, true
}

// gitPrints are git's commands that print the content of what a
// repository keeps (blobs, diffs, patches), whatever the working tree's
// files are; log and stash only with a patch.
var gitPrints = map[string]bool{"show": true, "cat-file": true, "diff": true, "grep": true, "archive": true,
	"blame": true, "annotate": true, "format-patch": true, "fast-export": true, "difftool": true, "bundle": true,
	"range-diff": true, "diff-tree": true, "diff-index": true, "diff-files": true, "unpack-file": true,
	"checkout-index": true}

// gitPatch reports whether a git option has log, reflog or stash print
// patches: -p, -u, -U<n>, --patch, --cc, word and colour diffs, -L, and a
// cluster of short options holding p or u (-pU3).
func gitPatch(a string) bool {
	switch {
	case a == "--patch" || a == "--cc" || a == "--full-diff" || a == "-c" || strings.HasPrefix(a, "--patch-with") ||
		strings.HasPrefix(a, "--unified") || strings.HasPrefix(a, "--word-diff") || strings.HasPrefix(a, "--color-words"):
		return true
	case strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--"):
		return strings.ContainsAny(a[1:], "puUL")
	}
	return false
}

// printsCommitted returns the command of the line's commands that has git
// print the content it keeps of files ("" for none): a read rule hides a
// file's path, in the file tools and the sandbox, but not its blobs in
// .git.
func printsCommitted(cmds []Command) string {
	for _, c := range cmds {
		if len(c.Args) < 2 || baseName(c.Args[0]) != "git" {
			continue
		}
		sub, rest := c.Args[1], c.Args[2:]
		patch := slices.ContainsFunc(rest, gitPatch)
		if gitPrints[sub] || (sub == "log" || sub == "reflog" || sub == "whatchanged" || sub == "stash") && patch || c.expanded[1] {
			return strings.Join(c.Args, " ")
		}
	}
	return ""
}

// errNotCommand says that an execute call's arguments hold no command.
var errNotCommand = errors.New("the arguments are not a command")

// lineOf returns a parse of the command in an execute call's arguments,
// done once when first asked for.
func lineOf(args json.RawMessage) func() ([]Command, error) {
	return sync.OnceValues(func() ([]Command, error) {
		var in struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(args, &in) != nil {
			return nil, errNotCommand
		}
		return Commands(in.Command)
	})
}

func firstOf(rs ...*Rule) *Rule {
	for _, r := range rs {
		if r != nil {
			return r
		}
	}
	return nil
}

// quote shortens a command for a reason.
func quote(s string) string {
	const most = 80
	if len(s) > most {
		s = s[:most] + "…"
	}
	return "`" + s + "`"
}
