package permission

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// How the programs the walker knows run code of their own: the options
// of pagers, editors and awk, git's, find's -exec, parallel, su and the
// shells.

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
