package permission

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	toolpkg "github.com/deepagents-go/deepagents/tool"
)

// Effect is what a rule does to the calls it matches.
type Effect int

// Effects, weakest first: when several rules match a call, the strongest
// decides.
const (
	// None: no rule decides; the caller's default applies.
	None Effect = iota
	// Allow runs the call without asking.
	Allow
	// Ask stops for a human's approval first.
	Ask
	// Deny refuses the call; it never runs.
	Deny
)

// String returns "allow", "ask", "deny" or "none".
func (e Effect) String() string {
	switch e {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Deny:
		return "deny"
	}
	return "none"
}

// ExecuteTool is the tool whose rules match commands by prefix; rules of
// other tools match their file_path or path argument by glob.
const ExecuteTool = "execute"

// ErrRule reports a rule that does not parse.
var ErrRule = errors.New("permission: invalid rule")

// Rule is one allow, ask or deny rule: a tool and, optionally, a pattern.
type Rule struct {
	Effect Effect
	Tool   string
	// Pattern is, for execute, a command prefix in words ("git status");
	// for other tools a glob of their path argument ("/src/**"). Empty
	// matches every call of Tool.
	Pattern string
	words   []string // Pattern split into words, for execute
	badGlob bool     // Pattern is not a valid glob (a Rule made by hand): it matches no path
}

// String returns the rule as ParseRule takes it, with its effect first.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Effect.String() + " " + r.Tool
	}
	return r.Effect.String() + " " + r.Tool + "(" + r.Pattern + ")"
}

// ParseRule parses "tool" or "tool(pattern)" as a rule with effect e.
func ParseRule(e Effect, s string) (Rule, error) {
	s = strings.TrimSpace(s)
	r := Rule{Effect: e, Tool: s}
	if e < Allow || e > Deny {
		return Rule{}, fmt.Errorf("%w %q: effect %d", ErrRule, s, e)
	}
	if open := strings.IndexByte(s, '('); open >= 0 {
		if !strings.HasSuffix(s, ")") {
			return Rule{}, fmt.Errorf("%w %q: a pattern is written tool(pattern)", ErrRule, s)
		}
		r.Tool, r.Pattern = strings.TrimSpace(s[:open]), strings.TrimSpace(s[open+1:len(s)-1])
	}
	if r.Tool == "" || strings.ContainsAny(r.Tool, " ()") {
		return Rule{}, fmt.Errorf("%w %q: no tool name", ErrRule, s)
	}
	if r.Tool == ExecuteTool && r.Pattern != "" {
		words, ok := ruleWords(strings.TrimSuffix(strings.TrimSuffix(r.Pattern, "*"), ":"))
		if !ok {
			return Rule{}, fmt.Errorf("%w %q: the pattern must be one simple command of plain words", ErrRule, s)
		}
		r.words = words
	} else if r.Pattern != "" {
		if !strings.HasPrefix(r.Pattern, "/") && !strings.HasPrefix(r.Pattern, "**") {
			return Rule{}, fmt.Errorf("%w %q: a path pattern starts with / or **", ErrRule, s)
		}
		if !doublestar.ValidatePattern(r.Pattern) {
			return Rule{}, fmt.Errorf("%w %q: bad glob", ErrRule, s)
		}
	}
	return r, nil
}

// Rules is a set of rules, safe for concurrent use once built. The zero
// value has none.
type Rules struct{ rules []Rule }

// New returns the set of the given rules.
func New(rules ...Rule) *Rules {
	rs := &Rules{rules: slices.Clone(rules)}
	for i := range rs.rules {
		r := &rs.rules[i]
		r.badGlob = r.Pattern != "" && !doublestar.ValidatePattern(r.Pattern)
	}
	return rs
}

// Rules returns the rules in the order they were given.
func (rs *Rules) Rules() []Rule {
	if rs == nil {
		return nil
	}
	return slices.Clone(rs.rules)
}

// Tools returns the tools the rules name, sorted, each once.
func (rs *Rules) Tools() []string {
	var out []string
	for _, r := range rs.Rules() {
		out = append(out, r.Tool)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Decision is the outcome of the rules for one call.
type Decision struct {
	Effect Effect
	// Rule is the rule that decided; nil for None, and for an Ask about a
	// command that cannot be parsed.
	Rule *Rule
	// Reason says why, in words for the user or the model.
	Reason string
}

// ReadTool is the tool whose rules are about reading files: its deny and
// ask rules apply to every tool that reads files (tool.Traits.ReadsFiles).
const ReadTool = "read_file"

// EditTool is the tool whose rules are about changing files: its deny and
// ask rules with a pattern apply to every other tool that edits files
// (tool.Traits.EditsFiles), write_file aside, whose rules are its own.
const EditTool = "edit_file"

// writeTool is the tool that creates and replaces files, apart from
// EditTool's reach.
const writeTool = "write_file"

// Decide returns what the rules make of a call of tool, which declares
// traits (the agent's tool.TraitsOf), with args.
//
// A rule's tool may name several tools (see tool.NameMatches): mcp__github
// stands for every tool of that MCP server.
//
// A read_file deny or ask rule with a pattern also decides the calls of
// the other tools that read files (grep, glob and ls) whose path argument
// it covers: with read_file(**/.env) denied, grep in /app/.env is denied
// too. It cannot see the files a search of a directory reaches: for those,
// give the backend a policy that denies reading DeniedReadPaths (the CLI
// does), so that listings, globs and greps leave those files out.
func (rs *Rules) Decide(tool string, traits toolpkg.Traits, args json.RawMessage) Decision {
	var mine, lent []*Rule // lent: read_file's or edit_file's, for the others
	var lender string      // the tool whose rules are lent
	var readDeny *Rule     // a deny rule on what read_file reads
	switch {
	case traits.ReadsFiles && tool != ReadTool:
		lender = ReadTool
	case traits.EditsFiles && tool != EditTool && tool != writeTool:
		lender = EditTool
	}
	if rs != nil {
		for i := range rs.rules {
			r := &rs.rules[i]
			switch {
			case toolpkg.NameMatches(r.Tool, tool):
				mine = append(mine, r)
			case lender != "" && r.Pattern != "" && r.Effect >= Ask && toolpkg.NameMatches(r.Tool, lender):
				lent = append(lent, r)
			}
			if readDeny == nil && r.Effect == Deny && toolpkg.NameMatches(r.Tool, ReadTool) {
				readDeny = r
			}
		}
	}
	if tool == ExecuteTool {
		line := lineOf(args)
		d := decideCommand(mine, line)
		if d.Effect == Deny || readDeny == nil {
			return d
		}
		// A line that does not parse is the command rules' to decide.
		if cmds, err := line(); err == nil {
			if what := printsCommitted(cmds); what != "" {
				return Decision{Effect: Ask, Rule: readDeny, Reason: "the rule " + readDeny.String() +
					" hides files, not what git keeps of them: " + quote(what) + " may print their committed content"}
			}
		}
		return d
	}
	if len(mine) == 0 && len(lent) == 0 {
		return Decision{}
	}
	var in struct {
		FilePath *string `json:"file_path"`
		Path     *string `json:"path"`
	}
	_ = json.Unmarshal(args, &in) // bad arguments: no path, only plain rules match
	p, hasPath := "", false
	switch {
	case in.FilePath != nil:
		p, hasPath = *in.FilePath, true
	case in.Path != nil:
		p, hasPath = *in.Path, true
	}
	chain := pathChain(p) // once, for every rule's pattern
	d := strongest(mine, func(r *Rule) bool {
		if r.Pattern == "" {
			return true
		}
		return hasPath && chain.match(r)
	})
	// A search or listing without a path starts at the root, which a
	// read rule covers only if it covers everything.
	if rd := strongest(lent, chain.match); rd.Effect > d.Effect {
		verb := " reads"
		if lender == EditTool {
			verb = " edits"
		}
		rd.Reason += " (" + tool + verb + " what it covers)"
		d = rd
	}
	return d
}

// DeniedReadPaths returns the path globs of the deny rules on read_file,
// in order, each once: the paths the model must not read by any tool.
// Decide denies read_file, and grep, glob and ls of a path they cover;
// a backend policy denying read access to each (backend.Deny(
// backend.AccessRead, glob)) also keeps them out of the listings, globs
// and greps of the directories above them, where Decide cannot look.
// A deny rule on read_file without a pattern denies the tool, not paths:
// it is not among them.
func (rs *Rules) DeniedReadPaths() []string {
	var out []string
	for _, r := range rs.Rules() {
		if r.Effect == Deny && r.Pattern != "" && toolpkg.NameMatches(r.Tool, ReadTool) && !slices.Contains(out, r.Pattern) {
			out = append(out, r.Pattern)
		}
	}
	return out
}

// chain is a virtual path and the directories above it, the path first: a
// rule on /secrets/** covers /secrets itself too. nil stands for a path
// with a "..", which every pattern matches. Decide makes it once for all
// the rules it tries.
type chain []string

// pathChain returns the chain of p ("" is the root).
func pathChain(p string) chain {
	if p == "" {
		p = "/"
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if strings.Contains("/"+p+"/", "/../") {
		return nil // never let .. step out of a rule's reach: treat as a match
	}
	p = path.Clean(p)
	c := chain{p}
	for p != "/" {
		p = path.Dir(p)
		c = append(c, p)
	}
	return c
}

// match reports whether r's glob matches a path of the chain. New has
// validated the glob.
func (c chain) match(r *Rule) bool {
	if c == nil {
		return true
	}
	if r.badGlob {
		return false
	}
	for _, p := range c {
		if doublestar.MatchUnvalidated(r.Pattern, p) {
			return true
		}
	}
	return false
}

// strongest returns the decision of the strongest rule that matches.
func strongest(rules []*Rule, match func(*Rule) bool) Decision {
	var best *Rule
	for _, r := range rules {
		if (best == nil || r.Effect > best.Effect) && match(r) {
			best = r
		}
	}
	if best == nil {
		return Decision{}
	}
	return Decision{Effect: best.Effect, Rule: best, Reason: "the rule " + best.String()}
}
