package permission

import (
	"strings"
)

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
