package permission

import (
	"errors"
	"fmt"
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
