package permission

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// ErrUnparsable reports a command line that Commands cannot take apart
// with certainty: it does not parse as bash, or it is too long or too
// deeply nested to be checked. Rules never allow such a command.
var ErrUnparsable = errors.New("permission: the command cannot be parsed with certainty")

// Bounds on what Commands takes apart, so that a huge or deeply nested
// argument costs bounded time and memory: past them a command is
// ErrUnparsable (asked about), never allowed.
const (
	// MaxCommandBytes is the longest command line Commands parses.
	MaxCommandBytes = 256 << 10
	// maxNesting bounds brackets, parentheses and braces open at once.
	maxNesting = 200
	// maxCodeDepth bounds strings run as code inside strings run as code
	// (eval 'sh -c "..."').
	maxCodeDepth = 8
	// maxWrappers bounds the exec wrappers unwrapped in one command
	// (timeout 1 nice timeout 1 ...): each is recorded with the words
	// after it.
	maxWrappers = 16
	// maxWords bounds the words of all the commands recorded for a line,
	// which wrappers inside wrappers (find -exec find -exec ...) would
	// otherwise make quadratic.
	maxWords = 1 << 18
)

// Command is one command a shell command line can run, as the rules see
// it: a simple command anywhere in the syntax tree (pipelines, lists,
// the bodies and conditions of if, while, until, for, case and
// functions, subshells, groups, command and process substitutions,
// here-documents, redirections), the command an exec wrapper runs
// (timeout 5 rm x runs rm x), and the commands in strings the shell runs
// as code (sh -c, eval, trap, watch, flock -c, alias values).
type Command struct {
	// Args are the words of the command, quotes removed. A word the shell
	// expands ($VAR, $(...), a glob, ~) is kept as written; no allow rule
	// is satisfied by such a word, and deny and ask rules that it might
	// satisfy make the command asked about.
	Args []string
	// Assigned is set when the command runs with an environment the line
	// changes: a VAR=value prefix, env VAR=value, export, a bare
	// assignment anywhere in the line, git -c. Allow rules do not apply
	// to it (GIT_CONFIG_*, LD_PRELOAD or PATH change what a program does);
	// deny and ask rules do.
	Assigned bool
	// Unsure, when not empty, says why the rules cannot know what this
	// command runs (an expanded command name, a wrapper option not
	// understood, a shell reading a script, an alias, a function); such a
	// command is denied by a matching deny rule and otherwise asked about.
	Unsure string
	// Maybe is set on a command found in text that may or may not run as
	// code: a quoted string holding a substitution (x='a[$(rm y)]'; ((x))
	// runs it), a variable's value (PAGER, GIT_CONFIG_VALUE_0), a git -c
	// value. Only deny and ask rules count for it, and they only ask.
	Maybe bool
	// Writes is set on every command of a line that redirects output into
	// a file (> file, >> file, &> file; not /dev/null or a descriptor):
	// allow rules do not apply to it, since an allowed echo would write
	// anywhere.
	Writes bool

	expanded []bool // per word: the shell expands it
	wrapper  bool   // an exec wrapper that only runs the command after it: no allow rule is needed for it
	moreArgs bool   // arguments are added at run time (xargs, find -exec)
}

// Commands returns every command the bash command line can run, in the
// order they appear (see Command). It fails with ErrUnparsable (wrapped,
// with the reason) on a line that does not parse or is past the bounds.
// An empty line or one of comments only has no commands.
func Commands(command string) (cmds []Command, err error) {
	if len(command) > MaxCommandBytes {
		return nil, fmt.Errorf("%w: it is longer than %d bytes", ErrUnparsable, MaxCommandBytes)
	}
	if nesting(command) > maxNesting {
		return nil, fmt.Errorf("%w: it nests more than %d levels", ErrUnparsable, maxNesting)
	}
	defer func() {
		// The parser is fuzzed upstream; this only keeps a bug in it from
		// crossing the API as a panic.
		if r := recover(); r != nil {
			cmds, err = nil, fmt.Errorf("%w: %v", ErrUnparsable, r)
		}
	}()
	w := &walker{funcs: map[string]bool{}}
	if err := w.script(command, &scope{}); err != nil {
		return nil, errors.Join(ErrUnparsable, err)
	}
	if w.words > maxWords {
		return nil, fmt.Errorf("%w: it runs more than %d words of commands", ErrUnparsable, maxWords)
	}
	for i := range w.out {
		w.out[i].Assigned = w.out[i].Assigned || w.assigned ||
			w.chdir && len(w.out[i].Args) > 0 && baseName(w.out[i].Args[0]) == "git"
		w.out[i].Writes = w.writes
	}
	return w.out, nil
}

// nesting returns an upper bound of the brackets open at once, quotes
// ignored: cheap, and past maxNesting the parser is not even tried.
func nesting(s string) int {
	depth, most := 0, 0
	tick := false // backquotes open and close alike: count one level for a pair
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '`' {
			if tick = !tick; !tick {
				c = ')'
			}
		}
		switch c {
		case '(', '{', '[', '`':
			depth++
			most = max(most, depth)
		case ')', '}', ']':
			depth = max(depth-1, 0)
		}
	}
	return most
}

// parse parses src as bash.
func parse(src string) (*syntax.File, error) {
	return syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
}

// walker collects the commands of a line and of the strings in it that
// run as code.
type walker struct {
	out      []Command
	funcs    map[string]bool // functions the line defines
	assigned bool            // the line changes the shell's environment (export, bare assignments)
	writes   bool            // the line redirects output into a file
	chdir    bool            // the line changes directory: git may find another repository there
	words    int             // words recorded, up to maxWords
}

// scope is what a piece of code inherits from where it is run.
type scope struct {
	src      string // the text the positions refer to
	depth    int    // strings run as code around this one
	assigned bool   // run with a changed environment (FOO=1 sh -c '...')
	moreArgs bool   // run with arguments added (parallel)
	quoted   bool   // a string that may be code, not code
	// numbers are the variables this script gives only numbers
	// (numericNames): a script run by another (sh -c) sets its own.
	numbers map[string]bool
}

// script walks the commands of src, parsed as bash.
func (w *walker) script(src string, sc *scope) error {
	f, err := parse(src)
	if err != nil {
		return err
	}
	inner := *sc
	inner.src = src
	inner.numbers = numericNames(f, w.funcs)
	syntax.Walk(f, func(n syntax.Node) bool {
		w.visit(&inner, n)
		return true
	})
	return nil
}

// visit handles one node of the tree; syntax.Walk goes on into its
// children, so substitutions in any word are reached.
func (w *walker) visit(sc *scope, n syntax.Node) {
	switch n := n.(type) {
	case *syntax.Stmt:
		if call, ok := n.Cmd.(*syntax.CallExpr); ok {
			w.call(sc, call, n.Redirs)
		}
	case *syntax.Redirect:
		if !sc.quoted && writesFile(sc, n) {
			w.writes = true
		}
	case *syntax.DeclClause:
		// declare, export, local, readonly, typeset: they set variables,
		// exported ones reach every later command.
		w.assigned = true
		args := []word{{s: n.Variant.Value}}
		c := Command{Assigned: true}
		for _, a := range n.Args {
			args = append(args, word{s: sc.text(a), exp: true})
			if a.Name != nil {
				if why := varUnsure(a.Name.Value, assignedValue(sc, a)); why != "" {
					c.Unsure = why
				}
			}
			if a.Value != nil && codeVar(a.Value.Lit()) {
				c.Unsure = "it names " + a.Value.Lit() + " (declare -n makes a name for it)"
			}
		}
		w.assignValues(sc, n.Args)
		w.emit(sc, args, c)
	case *syntax.WordIter:
		w.setsVar(sc, n.Name.Value) // for PATH in /tmp/x; do ls; done
	case *syntax.BinaryArithm:
		switch n.Op {
		case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
			syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
			w.setsVar(sc, arithName(n.X)) // ((PATH=1)) runs ./1/ls as ls
		}
	case *syntax.UnaryArithm:
		if n.Op == syntax.Inc || n.Op == syntax.Dec {
			w.setsVar(sc, arithName(n.X))
		}
	case *syntax.ParamExp:
		if why := reevaluated(n); why != "" {
			w.emit(sc, []word{{s: sc.text(n), exp: true}}, Command{Unsure: why})
		}
		if n.Index != nil && !allElements(n.Index) {
			w.arith(sc, n.Index) // ${a[i]}: the subscript is arithmetic
		}
		if n.Slice != nil {
			w.arith(sc, n.Slice.Offset) // ${x:o:l}: both are arithmetic
			w.arith(sc, n.Slice.Length)
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet {
			// [[ -v a[i] ]] evaluates the subscript.
			if wd, ok := n.X.(*syntax.Word); ok {
				w.subscript(sc, word{s: wd.Lit(), exp: wd.Lit() == ""}, "[[ -v ]]")
			}
		}
	case *syntax.ArithmExp:
		w.arith(sc, n.X)
	case *syntax.ArithmCmd:
		w.arith(sc, n.X)
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			w.arith(sc, x)
		}
	case *syntax.CStyleLoop:
		for _, x := range []syntax.ArithmExpr{n.Init, n.Cond, n.Post} {
			w.arith(sc, x)
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			// [[ x -eq y ]] evaluates both sides as arithmetic.
			for _, x := range []syntax.TestExpr{n.X, n.Y} {
				if wd, ok := x.(*syntax.Word); ok {
					w.arith(sc, wd)
				}
			}
		}
	case *syntax.SglQuoted:
		w.maybeCode(sc, n.Value)
	case *syntax.Lit:
		if strings.Contains(n.Value, `\`) {
			w.maybeCode(sc, strings.ReplaceAll(n.Value, `\`, ""))
		}
	}
}

// maybeCode walks a literal string that holds a command substitution as
// code that might run: eval, trap, arithmetic on a variable
// (x='a[$(rm y)]'; ((x))), PS4 and ${x@P} all run such text. What it
// reaches only ever makes the line asked about (see Command.quoted).
func (w *walker) maybeCode(sc *scope, s string) {
	if sc.depth >= maxCodeDepth || !strings.Contains(s, "$(") && !strings.Contains(s, "`") &&
		!strings.Contains(s, "<(") && !strings.Contains(s, ">(") {
		return
	}
	inner := *sc
	inner.depth++
	inner.quoted = true
	if w.script(s, &inner) != nil {
		// Not a command line (a[$(rm y)] is not one): its substitutions
		// still run where the text is expanded, so try it as an argument.
		_ = w.script(": "+s, &inner)
	}
}

// reevaluated says why an expansion runs as code a value the rules cannot
// see: ${!x} expands the variable x's value names, and ${x@P} expands x's
// value as a prompt, running the substitutions it holds ("" when it does
// neither). ${!prefix*} and ${!a[@]} list names: they run nothing.
func reevaluated(n *syntax.ParamExp) string {
	switch {
	case n.Excl && n.Names == 0 && (n.Index == nil || !allElements(n.Index)):
		return "it expands the variable another's value names (${!x}), which may hold code"
	case n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P"):
		return "it expands a value as a prompt (${x@P}), which runs the code it holds"
	}
	return ""
}

// arith records arithmetic over values the rules cannot know as code:
// bash evaluates an operand's value as an expression in turn, and an
// array subscript in it runs its substitutions (x='a[$(rm y)]'; $((x)),
// or $_ holding the last argument: git status 'a[$(rm y)]'; $((_))).
// Numbers, the line's own numeric variables and bash's numeric ones are
// known.
func (w *walker) arith(sc *scope, x syntax.ArithmExpr) {
	if x == nil {
		return // for ((;;)): a part left out
	}
	for n := range syntax.Preorder(x) {
		wd, ok := n.(*syntax.Word)
		if !ok {
			continue
		}
		lit := wd.Lit()
		switch {
		case lit != "" && isNumber(lit):
		case lit != "" && numeric(sc, lit):
		case lit == "" && len(wd.Parts) == 1 && numericParam(sc, wd.Parts[0]):
		default:
			w.emit(sc, []word{{s: sc.text(wd), exp: true}}, Command{
				Unsure: "it evaluates as arithmetic a value the rules cannot know (" + sc.text(wd) + "), which runs the code it holds"})
			return
		}
	}
}

// numeric reports whether the variable name holds only numbers: the
// line's own (numericNames), bash's, and the special parameters $#, $?,
// $$ and $!.
func numeric(sc *scope, name string) bool {
	return sc.numbers[name] || numericVars[name] || name == "#" || name == "?" || name == "$" || name == "!"
}

// numericParam reports whether p is $x or ${x} of a numeric variable,
// with no operator.
func numericParam(sc *scope, p syntax.WordPart) bool {
	pe, ok := p.(*syntax.ParamExp)
	return ok && pe.Param != nil && pe.Exp == nil && pe.Index == nil && pe.Slice == nil && pe.Repl == nil &&
		!pe.Excl && !pe.Length && pe.Names == 0 && numeric(sc, pe.Param.Value) ||
		ok && pe.Length // ${#x} is a length
}

// subscriptWhy says why a variable's name with a subscript (a[i]), which
// bash evaluates as arithmetic where it sets or tests the variable, runs
// code: a subscript that is not a number the rules know ("" when there is
// none, or it is one).
func subscriptWhy(sc *scope, x word) string {
	_, sub, ok := strings.Cut(x.s, "[")
	if !ok {
		return ""
	}
	sub = strings.TrimSuffix(sub, "]")
	if !x.exp && (isNumber(sub) || numeric(sc, sub) || sub == "@" || sub == "*") {
		return ""
	}
	return "evaluates the subscript of " + x.s + " as arithmetic, which runs the code it holds"
}

// subscript records a name with a subscript that runs code (subscriptWhy).
func (w *walker) subscript(sc *scope, x word, by string) {
	if why := subscriptWhy(sc, x); why != "" {
		w.emit(sc, []word{{s: x.s, exp: true}}, Command{Unsure: by + " " + why})
	}
}

// numericVars are bash's variables that only ever hold numbers.
var numericVars = map[string]bool{"RANDOM": true, "SECONDS": true, "LINENO": true, "BASHPID": true, "PPID": true,
	"UID": true, "EUID": true, "OPTIND": true, "SRANDOM": true, "EPOCHSECONDS": true, "COLUMNS": true, "LINES": true}

// isNumber reports whether s is an arithmetic constant: decimal, 0x hex,
// octal, or base#digits.
func isNumber(s string) bool {
	if base, digits, ok := strings.Cut(s, "#"); ok {
		return isDigits(base) && digits != "" && strings.Trim(digits, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_") == ""
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return len(s) > 2 && strings.Trim(s[2:], "0123456789abcdefABCDEF") == ""
	}
	return isDigits(s)
}

func isDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// allElements reports whether a subscript is [@] or [*]: every element,
// nothing evaluated.
func allElements(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	return ok && (wd.Lit() == "@" || wd.Lit() == "*")
}

// numericNames returns the variables f gives only numbers: assignments
// of a number (i=0, ((i=0)), let i=1), and for loops over numbers; ++ and
// -- keep them numbers. A name given anything else is not one. The same
// walk records in funcs the functions f defines.
func numericNames(f *syntax.File, funcs map[string]bool) map[string]bool {
	nums, other := map[string]bool{}, map[string]bool{}
	note := func(name string, number bool) {
		if number {
			nums[name] = true
		} else {
			other[name] = true
		}
	}
	for n := range syntax.Preorder(f) {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil {
				funcs[n.Name.Value] = true // the same walk records the line's functions
			}
		case *syntax.Assign:
			if n.Name != nil {
				note(n.Name.Value, n.Value != nil && isNumber(n.Value.Lit()) && !n.Append && n.Array == nil)
			}
		case *syntax.BinaryArithm:
			if n.Op == syntax.Assgn {
				if name := arithName(n.X); name != "" {
					y, ok := n.Y.(*syntax.Word)
					note(name, ok && isNumber(y.Lit()))
				}
			}
		case *syntax.CallExpr:
			// read, printf -v, mapfile: they set their names to anything.
			if len(n.Args) == 0 || !varSetters[baseName(n.Args[0].Lit())] {
				continue
			}
			for _, a := range n.Args[1:] {
				if name, _, _ := strings.Cut(a.Lit(), "["); name != "" {
					note(name, false)
				}
			}
		case *syntax.WordIter:
			all := true
			for _, it := range n.Items {
				all = all && isNumber(it.Lit())
			}
			note(n.Name.Value, all && n.InPos.IsValid())
		}
	}
	for name := range other {
		delete(nums, name)
	}
	return nums
}

// arithName returns the variable an arithmetic operand names, if it is a
// plain word.
func arithName(x syntax.ArithmExpr) string {
	if w, ok := x.(*syntax.Word); ok {
		name, _, _ := strings.Cut(w.Lit(), "[")
		return name
	}
	return ""
}

// setsVar records that the line sets a variable by a way other than an
// assignment word (a for loop, arithmetic, read): when it is one of
// codeVars, an unsure command stands for it.
func (w *walker) setsVar(sc *scope, name string) {
	if codeVar(name) {
		w.emit(sc, []word{{s: name, exp: true}}, Command{Unsure: varUnsure(name, word{exp: true})})
	}
}

// varSetters are builtins that set the variables their arguments name.
var varSetters = map[string]bool{"read": true, "printf": true, "mapfile": true, "readarray": true, "getopts": true}

// writesFile reports whether a redirection writes into a file.
func writesFile(sc *scope, r *syntax.Redirect) bool {
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.RdrClob, syntax.AppClob, syntax.RdrAll,
		syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob, syntax.DplOut:
	default:
		return false
	}
	if len(r.Word.Parts) == 1 {
		if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
			return false // > >(cmd): into a command, walked as one
		}
	}
	x := sc.word(r.Word)
	if x.exp {
		return true
	}
	switch x.s {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return false
	}
	if r.Op == syntax.DplOut {
		// >&2, >&-: a descriptor; >& file: a file.
		return strings.Trim(x.s, "0123456789-") != "" || x.s == ""
	}
	return true
}

// text returns the source of a node.
func (sc *scope) text(n syntax.Node) string {
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if a < 0 || b > len(sc.src) || a > b {
		return ""
	}
	return sc.src[a:b]
}

// word is one word of a command: its value, or its text as written when
// the shell expands it.
type word struct {
	s   string
	exp bool
}

// words returns the words of a call.
func (sc *scope) words(ws []*syntax.Word) []word {
	out := make([]word, len(ws))
	for i, x := range ws {
		out[i] = sc.word(x)
	}
	return out
}

// word returns a word's value with quotes removed, or its text and
// exp set when the shell expands any of it.
func (sc *scope) word(x *syntax.Word) word {
	var b strings.Builder
	exp := false
	for i, part := range x.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v, glob := unescape(p.Value)
			if glob || i == 0 && strings.HasPrefix(p.Value, "~") {
				exp = true
			}
			b.WriteString(v)
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				exp = true // $'\x72m': decoding is left to the shell
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, dp := range p.Parts {
				if l, ok := dp.(*syntax.Lit); ok {
					b.WriteString(unescapeDouble(l.Value))
				} else {
					exp = true
					b.WriteString(sc.text(dp))
				}
			}
		default:
			exp = true
			b.WriteString(sc.text(part))
		}
	}
	if exp {
		return word{s: sc.text(x), exp: true}
	}
	return word{s: b.String()}
}

// unescape removes the backslashes of an unquoted literal and reports
// whether the shell would expand it: an unescaped * or ?, a [...]
// bracket expression, or a brace expansion ({a,b}, {1..3}).
func unescape(v string) (string, bool) {
	var b strings.Builder
	glob, bracket, brace := false, false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\\' && i+1 < len(v) {
			i++
			if v[i] != '\n' {
				b.WriteByte(v[i])
			}
			continue
		}
		switch c {
		case '*', '?':
			glob = true
		case '[':
			bracket = true
		case ']':
			glob = glob || bracket
		case '{':
			brace = true
		case ',':
			glob = glob || brace
		case '.':
			glob = glob || brace && i+1 < len(v) && v[i+1] == '.'
		}
		b.WriteByte(c)
	}
	return b.String(), glob
}

// unescapeDouble removes the backslashes that escape inside double
// quotes: before $ ` " \ and a line break.
func unescapeDouble(v string) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] == '\\' && i+1 < len(v) && strings.IndexByte("$`\"\\\n", v[i+1]) >= 0 {
			i++
			if v[i] == '\n' {
				continue
			}
		}
		b.WriteByte(v[i])
	}
	return b.String()
}

// call handles a simple command.
func (w *walker) call(sc *scope, call *syntax.CallExpr, redirs []*syntax.Redirect) {
	w.assignValues(sc, call.Assigns)
	c := Command{Assigned: len(call.Assigns) > 0}
	for _, a := range call.Assigns {
		if a.Name != nil {
			if why := varUnsure(a.Name.Value, assignedValue(sc, a)); why != "" {
				c.Unsure = why
			}
		}
	}
	if len(call.Args) == 0 {
		if len(call.Assigns) > 0 {
			// A bare assignment: PATH=/tmp/evil:$PATH changes what every
			// later command runs, exported or not.
			w.assigned = true
		}
		if c.Unsure != "" {
			w.emit(sc, []word{{s: sc.text(call), exp: true}}, c)
		}
		return
	}
	w.run(sc, sc.words(call.Args), c, redirs)
}

// codeVars are the variables that decide which program or code a
// command runs: the search path, the dynamic loader's, a shell's start-up
// file, git's configuration files and programs. Setting one makes the
// commands after it unsure.
var codeVars = map[string]bool{
	"PATH": true, "LD_PRELOAD": true, "LD_LIBRARY_PATH": true, "LD_AUDIT": true, "BASH_ENV": true, "ENV": true,
	"SHELLOPTS": true, "BASHOPTS": true, "PS4": true, "PROMPT_COMMAND": true, "GIT_EXEC_PATH": true,
	"GIT_CONFIG_GLOBAL": true, "GIT_CONFIG_SYSTEM": true, "GIT_DIR": true, "GIT_CONFIG_PARAMETERS": true,
}

// codeVar reports whether setting the variable to a value not known
// (read, a for loop, printf -v) makes the commands after it unsure: one
// of codeVars, or GIT_CONFIG_KEY_n, which may name an alias.
func codeVar(name string) bool {
	return codeVars[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_")
}

// varUnsure says why setting the variable name to v makes the command
// unsure, or returns "": a variable of codeVars, or GIT_CONFIG_KEY_n set
// to an alias, an include (see gitKeyRenames) or a value the shell
// expands.
func varUnsure(name string, v word) string {
	switch {
	case codeVars[name]:
		return "it sets " + name + ", which changes what programs run"
	case strings.HasPrefix(name, "GIT_CONFIG_KEY_") && (v.exp || gitKeyRenames(v.s)):
		return "it sets " + name + " to a git configuration key that can rename a command: " + v.s
	}
	return ""
}

// assignedValue returns the value an assignment gives, as exp when it
// is not known from the text (an expansion, +=, an array).
func assignedValue(sc *scope, a *syntax.Assign) word {
	switch {
	case a.Append || a.Array != nil || a.Index != nil:
		return word{s: sc.text(a), exp: true}
	case a.Value == nil:
		return word{}
	}
	return sc.word(a.Value)
}

// assignValues walks the values of a call's assignments as text that may
// run as code (PAGER, GIT_CONFIG_VALUE_0, PROMPT_COMMAND, LESSOPEN).
func (w *walker) assignValues(sc *scope, as []*syntax.Assign) {
	for _, a := range as {
		if a.Value != nil {
			if v := sc.word(a.Value); !v.exp {
				w.valueCode(sc, v.s)
			}
		}
	}
}

// valueCode walks the value of a variable or a configuration key as code
// that may run: many programs run such values (a pager, an editor, a git
// alias "!cmd", LESSOPEN "|cmd"). What it reaches can only make the line
// asked about; a value that does not parse is not code.
func (w *walker) valueCode(sc *scope, v string) {
	v = strings.TrimLeft(v, "!| \t")
	if v == "" || sc.depth >= maxCodeDepth {
		return
	}
	inner := *sc
	inner.depth++
	inner.quoted = true
	_ = w.script(v, &inner)
}

// emit records a command of the given words; c carries its flags.
func (w *walker) emit(sc *scope, words []word, c Command) {
	if w.words += len(words); w.words > maxWords {
		return // Commands fails: the line is too complex to check
	}
	c.Args = make([]string, len(words))
	c.expanded = make([]bool, len(words))
	for i, x := range words {
		c.Args[i], c.expanded[i] = x.s, x.exp
	}
	c.Assigned = c.Assigned || sc.assigned
	c.moreArgs = c.moreArgs || sc.moreArgs
	c.Maybe = sc.quoted
	w.out = append(w.out, c)
}

// code walks a string the shell will run as code: the commands in it are
// run by the command that holds it.
func (w *walker) code(sc *scope, s word, by []word, c Command) {
	switch {
	case s.exp:
		c.Unsure = "it runs as code a string the shell expands: " + s.s
	case sc.depth >= maxCodeDepth:
		c.Unsure = "it nests code in strings too deeply"
	default:
		inner := *sc
		inner.depth++
		inner.assigned = inner.assigned || c.Assigned
		inner.moreArgs = inner.moreArgs || c.moreArgs
		if err := w.script(s.s, &inner); err != nil {
			c.Unsure = "the code it runs cannot be parsed: " + err.Error()
		} else {
			return
		}
	}
	c.wrapper = false
	w.emit(sc, by, c)
}

// optionCode returns the command lines a pager, an editor or awk runs
// from its arguments (man -P, less +!cmd, vim -c '!cmd'), and says why
// the command is unsure when it runs what cannot be read as one (an Ex
// command, awk's system() and pipes, an awk program from a file).
func optionCode(prog string, args []word) (code []word, unsure string) {
	switch prog {
	case "man":
		for i := 0; i < len(args); i++ {
			x := args[i]
			switch {
			case x.s == "--pager" || x.s == "--html" || x.s == "--config-file":
				if x.s == "--config-file" {
					return nil, "man reads a configuration, which may name a pager"
				}
				if i+1 < len(args) {
					code, i = append(code, args[i+1]), i+1
				}
			case strings.HasPrefix(x.s, "--pager=") || strings.HasPrefix(x.s, "--html="):
				_, v, _ := strings.Cut(x.s, "=")
				code = append(code, word{s: v, exp: x.exp})
			case strings.HasPrefix(x.s, "--config-file="):
				return nil, "man reads a configuration, which may name a pager"
			case strings.HasPrefix(x.s, "-") && !strings.HasPrefix(x.s, "--"):
				// A cluster of short options (-aP cmd): P and H take a
				// command, C a configuration; the others that take a value
				// end the cluster.
				for j := 1; j < len(x.s); j++ {
					letter := x.s[j]
					if !strings.ContainsRune("CEHLMPRSTempr", rune(letter)) {
						continue
					}
					v := word{s: x.s[j+1:], exp: x.exp}
					if v.s == "" && i+1 < len(args) {
						v, i = args[i+1], i+1
					}
					switch letter {
					case 'P', 'H':
						code = append(code, v)
					case 'C':
						return nil, "man reads a configuration, which may name a pager"
					}
					break
				}
			}
		}
	case "less", "more":
		for _, x := range args {
			if strings.HasPrefix(x.s, "+") {
				if _, cmd, ok := strings.Cut(x.s, "!"); ok {
					code = append(code, word{s: cmd, exp: x.exp})
				}
			}
		}
	case "awk", "gawk", "mawk", "nawk":
		program := true // the first operand is the program, unless -f names one
		for i := 0; i < len(args); i++ {
			x := args[i]
			switch {
			case x.s == "--":
				continue
			case strings.HasPrefix(x.s, "-f") || strings.HasPrefix(x.s, "--file") || strings.HasPrefix(x.s, "-E") ||
				strings.HasPrefix(x.s, "--exec") || strings.HasPrefix(x.s, "-i") || strings.HasPrefix(x.s, "--include") ||
				strings.HasPrefix(x.s, "-l") || strings.HasPrefix(x.s, "--load"):
				return nil, prog + " runs a program or a library from a file, which may run commands"
			case x.s == "-F" || x.s == "-v" || x.s == "-e" || x.s == "--source":
				if x.s == "-e" || x.s == "--source" {
					if i+1 < len(args) && awkRuns(args[i+1]) {
						return nil, prog + "'s program runs commands (system(), a pipe)"
					}
					program = false
				}
				i++
			case strings.HasPrefix(x.s, "-"):
			case program:
				if awkRuns(x) {
					return nil, prog + "'s program runs commands (system(), a pipe)"
				}
				program = false
			}
		}
	default: // vim and its names
		for i := 0; i < len(args); i++ {
			x := args[i]
			ex, ok := "", false
			switch {
			case x.s == "-c" || x.s == "--cmd":
				if i+1 < len(args) {
					i++
					ex, ok = args[i].s, true
					if args[i].exp {
						return nil, prog + " runs an Ex command the rules cannot read"
					}
				}
			case strings.HasPrefix(x.s, "-c") && !strings.HasPrefix(x.s, "--"):
				ex, ok = x.s[2:], true // -c'!cmd'
				if x.exp {
					return nil, prog + " runs an Ex command the rules cannot read"
				}
			case strings.HasPrefix(x.s, "-") && !strings.HasPrefix(x.s, "--") && strings.ContainsAny(x.s[1:], "cSsuUe"):
				// A cluster holding -c (an Ex command), -S or -u (a script,
				// a vimrc), -s (keys from a file), -e (Ex mode, commands
				// from the input).
				return nil, prog + " " + x.s + " runs commands from an argument, a file or its input"
			case strings.HasPrefix(x.s, "+") && len(x.s) > 1:
				ex, ok = x.s[1:], true
				if x.exp {
					return nil, prog + " runs an Ex command the rules cannot read"
				}
			}
			if !ok || isDigits(ex) || strings.HasPrefix(ex, "/") {
				continue // a line number, a search
			}
			if cmd, shell := strings.CutPrefix(strings.TrimLeft(ex, ": "), "!"); shell {
				code = append(code, word{s: cmd})
				continue
			}
			return nil, prog + " runs an Ex command (" + ex + "), which may run a shell"
		}
	}
	return code, ""
}

// awkRuns reports whether an awk program may run a command: system(), a
// pipe to or from one, or text the shell expands.
func awkRuns(x word) bool {
	// @name(...) calls a function by a name made at run time.
	return x.exp || strings.Contains(x.s, "system") || strings.Contains(x.s, "|") || strings.Contains(x.s, "@")
}

// codeBuiltins run a string or a file as code when given one of the
// listed options ("" for always): what they run cannot be checked.
var codeBuiltins = map[string]string{
	"source": "", ".": "", "fc": "", "hash": "p", "enable": "f", "mapfile": "C", "readarray": "C",
	"complete": "CF", "compgen": "CF", "bind": "x",
}

// run records the command of words and, through exec wrappers and
// strings run as code, every command it runs. c carries the flags of the
// command (Assigned, moreArgs).
func (w *walker) run(sc *scope, words []word, c Command, redirs []*syntax.Redirect) {
	for wrapped := 0; len(words) > 0; wrapped++ {
		if wrapped == maxWrappers {
			c.Unsure = "it nests too many wrappers"
			w.emit(sc, words, c)
			return
		}
		name := words[0]
		if name.exp {
			c.Unsure = "its command name is expanded by the shell: " + name.s
			w.emit(sc, words, c)
			return
		}
		base := baseName(name.s)
		if w.funcs[name.s] {
			c.Unsure = name.s + " is a function the command defines"
			w.emit(sc, words, c)
			return
		}
		if varSetters[base] {
			for i, x := range words[1:] {
				if base == "printf" && words[i].s != "-v" {
					continue // printf sets only the variable of -v
				}
				if name, _, _ := strings.Cut(x.s, "["); codeVar(name) && !x.exp {
					c.Unsure = "it sets a variable that may change what programs run: " + x.s
				}
				if why := subscriptWhy(sc, x); why != "" && !strings.HasPrefix(x.s, "-") {
					c.Unsure = base + " " + why
				}
			}
		}
		if base == "test" || base == "[" {
			for i, x := range words[1 : len(words)-1] {
				if x.s == "-v" {
					if why := subscriptWhy(sc, words[i+2]); why != "" {
						c.Unsure = base + " -v " + why
					}
				}
			}
		}
		if opts, ok := codeBuiltins[base]; ok {
			if opts == "" || hasShortOption(words[1:], opts) {
				c.Unsure = "it runs code through " + base
			}
			w.emit(sc, words, c)
			return
		}
		switch base {
		case "eval":
			for _, x := range words[1:] {
				if x.exp {
					c.Unsure = "it evaluates a string the shell expands: " + x.s
					w.emit(sc, words, c)
					return
				}
			}
			var src []string
			for _, x := range words[1:] {
				src = append(src, x.s)
			}
			c.wrapper = true
			w.emit(sc, words, c)
			w.code(sc, word{s: strings.Join(src, " ")}, words, c)
			return
		case "trap":
			c.wrapper = true
			w.emit(sc, words, c)
			args := words[1:]
			if len(args) > 0 && args[0].s == "--" {
				args = args[1:]
			}
			if len(args) > 1 && !strings.HasPrefix(args[0].s, "-") {
				w.code(sc, args[0], words, c)
			}
			return
		case "alias":
			// An alias changes what a later word of the line runs: the
			// line is asked about, and the alias's text walked as code.
			for _, x := range words[1:] {
				if _, v, ok := strings.Cut(x.s, "="); ok || x.exp {
					c.Unsure = "it defines an alias"
					w.code(sc, word{s: v, exp: x.exp}, words, Command{Assigned: c.Assigned})
				}
			}
			w.emit(sc, words, c)
			return
		case "man", "less", "more", "vim", "vi", "nvim", "view", "ex", "gvim", "rvim", "awk", "gawk", "mawk", "nawk":
			code, why := optionCode(base, words[1:])
			if why != "" {
				c.Unsure = why
			}
			w.emit(sc, words, c)
			for _, x := range code {
				w.code(sc, x, words, Command{Assigned: c.Assigned})
			}
			return
		case "git":
			var values []string
			w.emit(sc, gitWords(words, &c, &values), c)
			for _, v := range values {
				w.valueCode(sc, v)
			}
			return
		case "cd", "pushd", "popd":
			// cd sub && git status is git -C sub status: git's commands
			// in the line run with the repository it finds there.
			if len(words) > 1 && (words[1].exp || words[1].s != ".") || base == "popd" {
				w.chdir = true
			}
		case "find":
			w.find(sc, words, c)
			return
		case "parallel":
			w.parallel(sc, words, c)
			return
		case "su", "runuser":
			w.su(sc, words, c, base == "runuser")
			return
		}
		if sh, ok := shells[base]; ok {
			w.shell(sc, words, c, redirs, sh)
			return
		}
		spec, ok := wrappers[base]
		if !ok {
			w.emit(sc, words, c)
			return
		}
		u := spec.parse(words)
		if base == "script" {
			// script's operand is its log file; without -c it starts a shell.
			u.inner = nil
			if u.code == nil && u.unsure == "" {
				u.unsure = "it starts a shell that reads its commands from its input"
			}
		}
		wc := c
		wc.wrapper = spec.transparent
		if u.unsure != "" {
			wc.Unsure = u.unsure
			wc.wrapper = false
		}
		w.emit(sc, words, wc)
		for _, set := range u.sets {
			w.valueCode(sc, valueOf(set))
			name, v, _ := strings.Cut(set, "=")
			if why := varUnsure(name, word{s: v}); why != "" {
				c.Unsure = why
			}
		}
		if u.unsure != "" {
			return
		}
		c.Assigned = c.Assigned || u.assigned
		if spec.moreArgs {
			c.moreArgs = true
		}
		if u.code != nil {
			w.code(sc, *u.code, words, c)
			return
		}
		inner := u.inner
		switch base {
		case "flock":
			// flock FILE -c CMD: flock looks for -c after its file itself.
			if len(inner) > 0 && (inner[0].s == "-c" || inner[0].s == "--command") {
				if len(inner) > 1 {
					w.code(sc, inner[1], words, c)
				}
				return
			}
		case "watch":
			if !u.seen("x") && !u.seen("exec") && len(inner) > 0 {
				// watch runs its arguments, joined, with sh -c.
				w.code(sc, joinWords(inner), words, c)
				return
			}
		case "xargs":
			if len(inner) > 0 && (u.seen("I") || u.seen("i") || u.seen("replace")) {
				for _, x := range inner {
					if strings.Contains(x.s, "{}") || u.repl != "" && strings.Contains(x.s, u.repl) {
						c.Unsure = "xargs replaces part of the command it runs"
						break
					}
				}
			}
		}
		words = inner
	}
}

// joinWords joins words with spaces, as a program given them as one
// string does; expanded if any is.
func joinWords(ws []word) word {
	var b strings.Builder
	exp := false
	for i, x := range ws {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.s)
		exp = exp || x.exp
	}
	return word{s: b.String(), exp: exp}
}

// hasShortOption reports whether an option word among ws holds one of the
// letters in opts.
func hasShortOption(ws []word, opts string) bool {
	for _, x := range ws {
		if x.exp {
			return true // it may be one
		}
		if len(x.s) > 1 && x.s[0] == '-' && x.s[1] != '-' && strings.ContainsAny(x.s[1:], opts) {
			return true
		}
	}
	return false
}

// gitWords returns git's words with its global options left out, so
// that git -C dir commit matches a rule on "git commit" (deny and ask
// rules see through them). Options that change which repository,
// configuration or programs git uses set Assigned, so that allow rules
// do not apply: -c, --config-env, --exec-path=DIR, and -C, --git-dir,
// --work-tree and --bare, since a repository can commit a folder laid
// out as a bare repository whose config runs a command (core.fsmonitor)
// once git is pointed at it. A -c or --config-env that defines an alias
// or includes a file, or one the shell expands, sets Unsure: it can give
// any command another name. An option git does not know sets Unsure.
// The values -c gives are added to values: git runs many of them
// (core.pager, core.fsmonitor, alias.x=!cmd).
func gitWords(words []word, c *Command, values *[]string) []word {
	out := []word{words[0]}
	i := 1
	for ; i < len(words); i++ {
		x := words[i]
		if x.exp {
			break // a subcommand or option the shell expands: matched as written
		}
		s := x.s
		if !strings.HasPrefix(s, "-") {
			break
		}
		opt, val, hasVal := strings.Cut(s, "=")
		if !strings.HasPrefix(s, "--") {
			opt, val, hasVal = s, "", false
			if len(s) > 2 && (s[1] == 'C' || s[1] == 'c') {
				opt, val, hasVal = s[:2], s[2:], true // -Cdir, -ckey=value
			}
		}
		kind, known := gitOptions[opt]
		if !known || kind == gitFlag && hasVal {
			c.Unsure = "git's option " + s + " is not understood"
			break
		}
		if kind == gitLast {
			break // --version, --help: git prints and stops
		}
		if kind == gitFlag || kind == gitRepoFlag {
			if kind == gitRepoFlag {
				c.Assigned = true
			}
			continue
		}
		if kind == gitExecPath && !hasVal {
			break // --exec-path alone prints the path
		}
		v := word{s: val}
		if !hasVal && kind != gitExecPath {
			if i+1 >= len(words) {
				break
			}
			i++
			v = words[i]
		}
		switch kind {
		case gitRepo:
			if v.exp || v.s != "." || opt != "-C" {
				c.Assigned = true // -C . is where git runs anyway
			}
		case gitConfig:
			c.Assigned = true
			switch {
			case v.exp:
				c.Unsure = "git's " + opt + " sets a configuration the shell expands: " + v.s
			case gitKeyRenames(v.s):
				c.Unsure = "git's " + opt + " " + v.s + " defines an alias or includes a file, which can rename a command"
			case opt == "-c":
				*values = append(*values, valueOf(v.s))
			}
		case gitExecPath:
			c.Assigned = true
		}
	}
	return append(out, words[min(i, len(words)):]...)
}

// What a global option of git is, for gitWords.
const (
	gitFlag     = iota // no argument, harmless: --no-pager
	gitRepoFlag        // no argument, chooses the repository: --bare
	gitArg             // an argument, harmless: --namespace
	gitRepo            // an argument that chooses the repository: -C, --git-dir
	gitConfig          // a configuration: -c, --config-env
	gitExecPath        // --exec-path=DIR; alone it prints the path
	gitLast            // git prints something and runs no command
)

// gitOptions are git's global options (git --help).
var gitOptions = map[string]int{
	"-p": gitFlag, "-P": gitFlag, "--paginate": gitFlag, "--no-pager": gitFlag, "--no-replace-objects": gitFlag,
	"--no-lazy-fetch": gitFlag, "--no-optional-locks": gitFlag, "--no-advice": gitFlag, "--literal-pathspecs": gitFlag,
	"--glob-pathspecs": gitFlag, "--noglob-pathspecs": gitFlag, "--icase-pathspecs": gitFlag,
	"--bare":      gitRepoFlag,
	"--namespace": gitArg, "--super-prefix": gitArg, "--list-cmds": gitArg, "--attr-source": gitArg,
	"-C": gitRepo, "--git-dir": gitRepo, "--work-tree": gitRepo,
	"-c": gitConfig, "--config-env": gitConfig,
	"--exec-path": gitExecPath,
	"--version":   gitLast, "--help": gitLast, "--html-path": gitLast, "--man-path": gitLast, "--info-path": gitLast,
	"-v": gitLast, "-h": gitLast,
}

// gitKeyRenames reports whether a git configuration key (the start of
// -c key=value, --config-env key=VAR, GIT_CONFIG_KEY_n's value) can
// give a command another name: an alias, or a file included that may
// define one. Section names are case-insensitive.
func gitKeyRenames(key string) bool {
	k := strings.ToLower(strings.TrimSpace(key))
	return strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "include.") || strings.HasPrefix(k, "includeif.")
}

// find records find and each command its -exec, -execdir, -ok and
// -okdir actions run.
func (w *walker) find(sc *scope, words []word, c Command) {
	w.emit(sc, words, c)
	for i := 1; i < len(words); i++ {
		switch words[i].s {
		case "-exec", "-execdir", "-ok", "-okdir":
		default:
			continue
		}
		j := i + 1
		for j < len(words) && words[j].s != ";" && words[j].s != "+" {
			j++
		}
		inner := slices.Clone(words[i+1 : j])
		ic := c
		ic.moreArgs = true
		if len(inner) > 0 && strings.Contains(inner[0].s, "{}") {
			ic.Unsure = "find replaces the name of the command it runs"
			w.emit(sc, inner, ic)
		} else {
			w.run(sc, inner, ic, nil)
		}
		i = j
	}
}

// parallel records GNU parallel and the command it runs: the words
// before ::: joined into a shell command; without them it reads
// commands from its input, which is unsure.
func (w *walker) parallel(sc *scope, words []word, c Command) {
	end := -1
	for i, x := range words {
		if strings.HasPrefix(x.s, ":::") || strings.HasPrefix(x.s, "::::") {
			end = i
			break
		}
	}
	if end < 2 || strings.HasPrefix(words[1].s, "-") {
		c.Unsure = "parallel's options or input are not understood"
		w.emit(sc, words, c)
		return
	}
	w.emit(sc, words, c)
	ic := c
	ic.moreArgs = true
	w.code(sc, joinWords(words[1:end]), words, ic)
}

// su records su or runuser and what it runs: runuser -u USER CMD runs
// CMD, -c CMD runs CMD through a shell; anything else starts a shell.
// Their options may come after the user (they are permuted).
func (w *walker) su(sc *scope, words []word, c Command, runuser bool) {
	spec := wrapper{short: "lmpPfT", shortArg: "gGsw", code: "c", longArg: "group supp-group shell whitelist-environment",
		long: "login preserve-environment pty fast no-pty", codeLong: "command session-command", dashFlag: true, permute: true}
	if runuser {
		spec.shortArg += "u"
		spec.longArg += " user"
	}
	u := spec.parse(words)
	switch {
	case u.unsure != "":
		c.Unsure = u.unsure
	case runuser && u.seen("u") && u.code == nil:
		w.emit(sc, words, c)
		w.run(sc, u.inner, c, nil)
		return
	case u.code != nil:
		w.emit(sc, words, c)
		w.code(sc, *u.code, words, c)
		return
	default:
		c.Unsure = "it starts a shell that reads its commands from its input"
	}
	w.emit(sc, words, c)
}

// shells are the shells whose code the rules can read: true for those
// whose -c strings parse as bash; the others' (zsh, fish, csh) are
// unsure.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "ash": true, "ksh": true, "mksh": true, "rbash": true,
	"zsh": false, "fish": false, "csh": false, "tcsh": false, "yash": false, "elvish": false, "nu": false, "xonsh": false,
	"pwsh": false,
}

// shell records a shell and the code it runs: sh -c CODE, or a
// here-document or here-string it reads; a script file, or commands read
// from a pipe, are unsure.
func (w *walker) shell(sc *scope, words []word, c Command, redirs []*syntax.Redirect, bashLike bool) {
	spec := wrapper{short: "abefhkmnptuvxBCHPilrsDEc", shortArg: "oO", plus: true,
		long:    "norc noprofile login posix restricted verbose version help debugger dump-strings dump-po-strings noediting pretty-print",
		longArg: "rcfile init-file", transparent: true}
	u := spec.parse(words)
	var src *word
	switch {
	case !bashLike:
		u.unsure = baseName(words[0].s) + "'s syntax is not checked"
	case u.unsure != "":
	case u.seen("c"):
		if len(u.inner) == 0 {
			u.unsure = "-c without a command"
		} else {
			src = &u.inner[0]
		}
	case u.seen("s") || len(u.inner) == 0:
		for _, r := range redirs {
			switch r.Op {
			case syntax.Hdoc, syntax.DashHdoc:
				if r.Hdoc != nil {
					src = hereDoc(sc, r.Hdoc)
				}
			case syntax.WordHdoc:
				x := sc.word(r.Word)
				src = &x
			}
		}
		if src == nil {
			u.unsure = "it runs commands it reads from its input"
		}
	default:
		u.unsure = "it runs the script " + u.inner[0].s
	}
	wc := c
	if u.unsure != "" {
		wc.Unsure = u.unsure
	}
	wc.wrapper = wc.Unsure == ""
	w.emit(sc, words, wc)
	if src != nil {
		w.code(sc, *src, words, c)
	}
}

// hereDoc returns the text of a here-document, expanded when it holds
// expansions (their commands are reached by the walk anyway).
func hereDoc(sc *scope, x *syntax.Word) *word {
	var b strings.Builder
	for _, p := range x.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return &word{s: sc.text(x), exp: true}
		}
		b.WriteString(l.Value)
	}
	return &word{s: b.String()}
}

// wrapper describes the options of an exec wrapper: a program that runs
// the command given after its options and operands. Long option lists
// are separated by spaces.
type wrapper struct {
	// transparent: the wrapper only runs the command (timeout, nice), so
	// an allow rule on the inner command is enough; other wrappers (sudo,
	// setpriv, chroot) need an allow rule of their own.
	transparent bool
	short       string // short options without an argument
	shortArg    string // short options with an argument, attached or next
	shortOpt    string // short options with an optional, attached, argument
	long        string // long options without an argument
	longArg     string // long options with an argument (--x=v or --x v)
	longOpt     string // long options with an optional argument (--x=v)
	code        string // short options whose argument is a command string
	codeLong    string
	noCmd       string // short options after which nothing is run (taskset -p PID)
	noCmdLong   string
	env         string // short options that set a variable of the command (systemd-run -E)
	envLong     string
	unsure      string // short options that make the command unknown (sudo -s)
	unsureLong  string
	operands    int  // operands before the command (timeout's duration)
	assigns     bool // NAME=VALUE operands before the command set variables (env, sudo)
	dashFlag    bool // "-" alone is an option (env -, su -)
	plus        bool // +x options too (shells)
	permute     bool // options may follow operands, up to --
	moreArgs    bool // the command gets more arguments at run time (xargs)
	anyLong     bool // any --name or --name=value is an option without a separate argument (firejail)
	shell       bool // without a command it starts a shell reading its input (chroot, unshare)
}

// unwrapped is what a wrapper's words say.
type unwrapped struct {
	inner    []word // the command run, empty for none
	code     *word  // a command string it runs
	assigned bool   // it changes the command's environment
	unsure   string // why the command it runs cannot be known
	flags    []string
	repl     string   // xargs -I's replacement string
	sets     []string // the NAME=VALUE it gives the command
}

// valueOf returns the value of NAME=VALUE.
func valueOf(s string) string {
	_, v, _ := strings.Cut(s, "=")
	return v
}

func (u *unwrapped) seen(opt string) bool {
	for _, f := range u.flags {
		if f == opt {
			return true
		}
	}
	return false
}

func hasWord(list, w string) bool {
	return w != "" && strings.Contains(" "+list+" ", " "+w+" ")
}

// parse reads a wrapper's options and operands.
func (spec wrapper) parse(words []word) (u unwrapped) {
	name := baseName(words[0].s)
	ops := spec.operands
	var rest []word
	noCmd := false
	endOpts := false
	i := 1
	for ; i < len(words); i++ {
		x := words[i]
		s := x.s
		isOpt := !endOpts && len(s) > 1 && (s[0] == '-' || spec.plus && s[0] == '+')
		if x.exp {
			// It may be an option, or split into several words.
			u.unsure = "an argument of " + name + " is expanded by the shell: " + s
			return u
		}
		switch {
		case !endOpts && s == "--":
			if spec.permute {
				i++
				goto done
			}
			endOpts = true
			continue
		case !endOpts && s == "-" && spec.dashFlag:
			continue
		case isOpt && strings.HasPrefix(s, "--"):
			opt, val, hasVal := strings.Cut(s[2:], "=")
			u.flags = append(u.flags, opt)
			switch {
			case hasWord(spec.longArg, opt) || hasWord(spec.codeLong, opt) || hasWord(spec.envLong, opt):
				v := word{s: val}
				if !hasVal {
					if i+1 >= len(words) {
						u.unsure = name + "'s option " + s + " lacks its argument"
						return u
					}
					i++
					v = words[i]
				}
				if hasWord(spec.codeLong, opt) {
					u.code = &v
				}
				if hasWord(spec.envLong, opt) {
					if v.exp {
						u.unsure = name + "'s option " + s + " sets a variable the shell expands"
						return u
					}
					u.assigned = true
					u.sets = append(u.sets, v.s)
				}
				if opt == "replace" {
					u.repl = v.s
				}
			case hasWord(spec.longOpt, opt):
				if opt == "replace" && hasVal {
					u.repl = val
				}
			case hasWord(spec.long, opt) && !hasVal, spec.anyLong:
			default:
				u.unsure = name + "'s option " + s + " is not understood"
				return u
			}
			if hasWord(spec.unsureLong, opt) {
				u.unsure = name + " " + s + " runs a command the rules cannot see"
				return u
			}
			noCmd = noCmd || hasWord(spec.noCmdLong, opt)
			continue
		case isOpt:
			for j := 1; j < len(s); j++ {
				c := s[j]
				u.flags = append(u.flags, string(c))
				switch {
				case strings.IndexByte(spec.unsure, c) >= 0:
					u.unsure = name + " -" + string(c) + " runs a command the rules cannot see"
					return u
				case strings.IndexByte(spec.short, c) >= 0:
					noCmd = noCmd || strings.IndexByte(spec.noCmd, c) >= 0
					continue
				case strings.IndexByte(spec.shortOpt, c) >= 0:
					if c == 'i' && name == "xargs" {
						u.repl = s[j+1:]
					}
				case strings.IndexByte(spec.shortArg, c) >= 0 || strings.IndexByte(spec.code, c) >= 0 || strings.IndexByte(spec.env, c) >= 0:
					v := word{s: s[j+1:]}
					if j+1 == len(s) {
						if i+1 >= len(words) {
							u.unsure = name + "'s option -" + string(c) + " lacks its argument"
							return u
						}
						i++
						v = words[i]
					}
					if strings.IndexByte(spec.code, c) >= 0 {
						u.code = &v
					}
					if strings.IndexByte(spec.env, c) >= 0 {
						if v.exp {
							u.unsure = name + "'s option -" + string(c) + " sets a variable the shell expands"
							return u
						}
						u.assigned = true
						u.sets = append(u.sets, v.s)
					}
					if c == 'I' && name == "xargs" {
						u.repl = v.s
					}
				default:
					u.unsure = name + "'s option -" + string(c) + " is not understood"
					return u
				}
				noCmd = noCmd || strings.IndexByte(spec.noCmd, c) >= 0
				break
			}
			continue
		}
		// An operand.
		if ops > 0 {
			ops--
			continue
		}
		if spec.assigns && !x.exp && isAssignment(s) {
			u.assigned = true
			u.sets = append(u.sets, s)
			continue
		}
		if !spec.permute {
			break
		}
		rest = append(rest, x)
	}
done:
	if spec.permute {
		u.inner = append(rest, words[min(i, len(words)):]...)
	} else {
		u.inner = words[min(i, len(words)):]
	}
	if noCmd {
		u.inner = nil
	} else if spec.shell && len(u.inner) == 0 && u.code == nil {
		u.unsure = "it starts a shell that reads its commands from its input"
	}
	return u
}

// wrappers are the exec wrappers whose options are understood: the
// command they run is matched by the rules as well as the wrapper.
// Others (an interpreter, ssh, make) are matched as themselves only.
var wrappers = map[string]wrapper{
	"timeout": {transparent: true, short: "v", shortArg: "sk", longArg: "signal kill-after", long: "foreground preserve-status verbose", operands: 1},
	"nice":    {transparent: true, short: "0123456789", shortArg: "n", longArg: "adjustment"},
	"nohup":   {transparent: true},
	"stdbuf":  {transparent: true, shortArg: "ioe", longArg: "input output error"},
	"ionice": {transparent: true, short: "tu", shortArg: "cnpPu", longArg: "class classdata pid pgid uid", long: "ignore",
		noCmd: "pPu", noCmdLong: "pid pgid uid"},
	"taskset": {transparent: true, short: "acp", long: "all-tasks pid cpu-list", operands: 1, noCmd: "p", noCmdLong: "pid"},
	"chrt": {transparent: true, short: "abdfiorRmpve", shortArg: "TPD", longArg: "sched-runtime sched-period sched-deadline",
		long: "all-tasks batch deadline fifo idle other rr reset-on-fork max pid verbose ext", operands: 1, noCmd: "pm", noCmdLong: "pid max"},
	"prlimit": {transparent: true, shortOpt: "cdefilmnqrstuvxy", shortArg: "po", longArg: "pid output",
		longOpt: "core data nice fsize sigpending memlock rss nofile msgqueue rtprio stack cpu nproc as locks rttime",
		long:    "noheadings raw verbose", noCmd: "p", noCmdLong: "pid"},
	"flock": {transparent: true, short: "sxenouF", shortArg: "wE", code: "c", codeLong: "command",
		longArg: "timeout wait conflict-exit-code", long: "shared exclusive nonblock nb unlock close no-fork verbose", operands: 1},
	"setpriv": {short: "d", longArg: "ruid euid rgid egid reuid regid groups inh-caps ambient-caps bounding-set securebits pdeathsig selinux-label apparmor-profile landlock-access landlock-rule seccomp-filter",
		long: "dump nnp no-new-privs clear-groups keep-groups init-groups reset-env"},
	"nsenter": {shell: true, short: "aFe", shortArg: "tSGZ", shortOpt: "muinpUCTrw", longArg: "target setuid setgid",
		longOpt: "mount uts ipc net pid user cgroup time root wd user-parent", long: "all follow-context preserve-credentials no-fork keep-caps env join-cgroup"},
	"sudo": {short: "AbBEHkKlnNPSv", shortArg: "ugpCDrtUTRc", shortOpt: "h", unsure: "sie", noCmd: "lvKV",
		longArg: "user group prompt role type other-user command-timeout close-from chdir chroot login-class",
		longOpt: "preserve-env host", long: "askpass background bell edit help list non-interactive preserve-groups reset-timestamp remove-timestamp set-home shell login stdin validate version",
		unsureLong: "shell login edit", noCmdLong: "list validate remove-timestamp version help", assigns: true},
	"doas": {short: "nL", shortArg: "uC", unsure: "s", noCmd: "LC"},
	"env": {transparent: true, short: "i0v", shortArg: "uC", unsure: "S", longArg: "unset chdir", unsureLong: "split-string",
		long: "ignore-environment null debug list-signal-handling", longOpt: "ignore-signal default-signal block-signal", assigns: true, dashFlag: true},
	"xargs": {transparent: true, moreArgs: true, short: "0oprtx", shortArg: "adEILnPs", shortOpt: "eil",
		longArg: "arg-file delimiter max-args max-procs max-chars process-slot-var", longOpt: "eof replace max-lines",
		long: "null interactive no-run-if-empty verbose exit show-limits open-tty"},
	"watch": {transparent: true, short: "tbegcxprwC", shortArg: "nq", shortOpt: "d", longArg: "interval equexit", longOpt: "differences",
		long: "no-title beep errexit chgexit color no-color exec precise no-wrap no-linewrap"},
	"script": {shell: true, short: "aefqwh", shortArg: "EIOBTm", shortOpt: "t", code: "c", codeLong: "command",
		longArg: "echo log-in log-out log-io log-timing logging-format output-limit", longOpt: "timing", long: "append return flush force quiet", permute: true},
	"busybox":    {transparent: true},
	"command":    {transparent: true, short: "pvV", noCmd: "vV"},
	"builtin":    {transparent: true},
	"exec":       {transparent: true, short: "cl", shortArg: "a"},
	"time":       {transparent: true, short: "apvq", shortArg: "fo", longArg: "format output", long: "append portability verbose quiet"},
	"setsid":     {transparent: true, short: "cfw", long: "ctty fork wait"},
	"catchsegv":  {transparent: true},
	"unbuffer":   {transparent: true, short: "p"},
	"caffeinate": {transparent: true, short: "disum", shortArg: "tw"},
	"firejail":   {shell: true, anyLong: true},
	"systemd-run": {short: "qGrdPtS", shortArg: "pEMHu", env: "E", envLong: "setenv", unsure: "S", unsureLong: "shell",
		longArg: "unit property description slice uid gid nice working-directory machine host service-type on-active on-boot on-startup on-unit-active on-unit-inactive on-calendar on-clock-change on-timezone-change timer-property path-property socket-property",
		long:    "user system scope wait pipe pty quiet collect remain-after-exit same-dir no-block no-ask-password send-sighup slice-inherit expand-environment"},
	"proxychains":  {short: "q", shortArg: "f"},
	"proxychains4": {short: "q", shortArg: "f"},
	"torsocks":     {short: "idq", shortArg: "uapP", longArg: "user pass address port", long: "isolate debug quiet", unsureLong: "shell"},
	"chroot":       {shell: true, longArg: "userspec groups", long: "skip-chdir", operands: 1},
	"unshare": {shell: true, short: "rcfl", shortArg: "RwSG", shortOpt: "muinpUCT",
		longArg: "map-user map-group propagation setgroups root wd setuid setgid monotonic boottime map-users map-groups",
		longOpt: "mount uts ipc net pid user cgroup time kill-child mount-proc", long: "fork map-root-user map-current-user map-auto keep-caps"},
	"strace": {short: "cCdDfFhikqrtTvVwxyzZn", shortArg: "abeIoOpPsSuUX", env: "E"},
	"ltrace": {short: "cCfhiLrStTV", shortArg: "aAeFlnopsu"},
}

// isAssignment reports whether w is VAR=value.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
