// Package permission decides, by rules, whether a tool call may run, must
// be approved by a human first, or is refused: allow, ask and deny rules in
// the spirit of Claude Code's, for execute by command prefix and for the
// file tools by path glob.
//
// A rule names a tool and, optionally, a pattern in parentheses:
//
//	execute                  every command
//	execute(git status)      "git status" with any further arguments
//	write_file(/src/**)      writes below /src
//	read_file(**/.env)       reads of any .env file
//	task                     every call of the task tool
//
// # Commands
//
// A command line is parsed as bash (mvdan.cc/sh/v3/syntax, the parser of
// shfmt) and every command the syntax tree can run is matched on its own
// (see Commands): the parts of pipelines and lists; the conditions and
// bodies of !, if, while, until, for, select and case; groups, subshells
// and function bodies; command and process substitutions wherever they
// stand (arguments, assignments, parameter expansions, arithmetic,
// [[ ]], redirections, here-documents); and the code in strings the shell
// runs: eval's arguments, trap's action, sh -c and bash -c, su -c,
// script -c, flock -c, watch, parallel, an alias's value, a shell's
// here-document.
//
// Exec wrappers whose options are known (timeout, nice, nohup, stdbuf,
// ionice, taskset, chrt, prlimit, flock, setpriv, nsenter, sudo, doas, su,
// runuser, env, xargs, find -exec, parallel, watch, script, busybox,
// command, builtin, exec, time, setsid, catchsegv, unbuffer, caffeinate,
// firejail, systemd-run, proxychains, torsocks, chroot, unshare, strace,
// ltrace) are unwrapped: both the wrapper and the command it runs are
// matched, so a deny rule on rm denies timeout -s KILL 5 rm x and
// sudo -u bob env -i rm x. git's global options are skipped: git -C dir
// commit, git -c k=v commit, git --git-dir=x commit and git --no-pager
// commit all match a deny or ask rule on "git commit". Those that choose
// the repository or the configuration keep allow rules from applying
// (see below), and a -c or --config-env that defines an alias or
// includes a file (alias.*, include.path, includeIf.*.path) makes the
// command unsure: git -c alias.ci=commit ci is asked about.
//
// Deny wins over ask, and ask over allow. A line is denied when any
// command it can run matches a deny rule; asked about when any matches
// an ask rule or cannot be known; allowed only when every command matches
// an allow rule; otherwise no rule decides and the caller's default
// applies (with the CLI: ask, unless --auto-approve). Wrappers that only
// run the next command (timeout, nice, nohup, stdbuf, ionice, taskset,
// chrt, prlimit, flock, env, xargs, watch, busybox, command, builtin,
// exec, time, setsid, catchsegv, unbuffer, caffeinate, sh -c, eval, trap)
// need no allow rule of their own; the others (sudo, su, setpriv,
// chroot, find, ...) do.
//
// # Failing closed
//
// What the rules cannot know is asked about, never allowed: a line that
// does not parse as bash, one over MaxCommandBytes or nested too deeply
// (ErrUnparsable); a command whose name the shell expands ($X, $(...),
// a glob, ~, $'\x..'); a wrapper option not understood; a call of a
// function the line defines; an alias definition; source and .; a shell
// that runs a script file or reads commands from a pipe; a string run as
// code that the shell expands (eval "$CMD"); setting a variable that
// chooses the program or its code (PATH, LD_PRELOAD, LD_LIBRARY_PATH,
// BASH_ENV, ENV, PS4, GIT_DIR, GIT_EXEC_PATH, GIT_CONFIG_GLOBAL, ...),
// by an assignment or by a for loop, arithmetic, read, printf -v or
// declare -n; GIT_CONFIG_KEY_n set to an alias or include key, or to a
// value the shell expands, and GIT_CONFIG_PARAMETERS. A deny rule still
// denies such a command when its words match. (With no
// execute rule but "allow execute", every line is allowed: no rule is
// there to slip past.)
//
// A program the rules do not know as a wrapper may still run its
// arguments (numactl, ssh, docker exec, npx, uv run): when a deny rule's
// words stand in a row among a command's arguments, or an argument is
// itself a command line that runs them, whole or after an = (sg grp
// 'rm x', sed 'e rm x', tar --to-command='rm x',
// tar --checkpoint-action=exec='rm x'), the line is asked about (except
// for programs that take names as data: echo, printf, man, which, git,
// grep, cat, ls and the like). Arguments are parsed within a budget of
// MaxCommandBytes per decision; past it such a line is asked about.
//
// In arguments, a word the shell expands ($VAR, "$(...)", a glob) is
// compared as written, and no rule word is satisfied by it: an allow
// rule needing that word does not apply, and a deny or ask rule that it
// might satisfy makes the line asked about (git $SUB under a deny of
// "git push"). The literal words before it still match: rm $F is denied
// by a deny rule on rm.
//
// Allow rules with a pattern do not apply to a command that runs in a
// changed environment, since GIT_CONFIG_*, GIT_DIR, LD_PRELOAD or PATH
// change what a program does: a VAR=value prefix, env VAR=value, sudo
// VAR=value, export, declare, or a bare assignment anywhere in the line
// (PATH=/tmp/x:$PATH; git status), git's -c, --config-env and
// --exec-path, and git's -C (but -C .), --git-dir, --work-tree and
// --bare, and git in a line that changes directory (cd, pushd, popd): a
// repository can commit a folder laid out as a bare repository whose
// config runs a command (core.fsmonitor) when git is pointed at it. Nor
// do they apply to a line that redirects output into a
// file (> f, >> f, &> f), so that allowing echo does not allow writing
// any file. Deny and ask rules apply all the same.
//
// Text that may run as code without being code is walked too, and what
// it reaches can only make the line asked about: a quoted string holding
// a substitution (x='a[$(rm y)]'; ((x)) runs rm in bash's arithmetic), a
// variable's value (PAGER='rm x' git log, PROMPT_COMMAND), a git -c value
// (core.fsmonitor, alias.x='!cmd').
//
// # Reading
//
// Rules of the file tools match their file_path or path argument by
// glob; a rule on a directory covers what is below it, and a path with
// .. in it is taken as matching. A read_file deny or ask rule with a
// pattern also decides grep, glob and ls calls whose path it covers, and
// an edit_file one the calls of the other tools that edit files
// (tool.Traits.EditsFiles; write_file keeps its own rules). A
// search of a directory above a denied file is out of a call rule's
// sight: DeniedReadPaths gives the globs to deny reading
// in the backend itself (backend.Policy leaves them out of listings,
// globs and greps), as the CLI does.
//
// # Known limits
//
// The rules see the text the model sends, not what programs do with it.
// A prefix rule denies a command by name, and any interpreter or build
// tool can run that command under another name: python -c, perl -e,
// node -e, awk's system(), make and a Makefile, npm run, go generate,
// git hooks and aliases from the repository's own configuration or from
// a configuration file a changed HOME or XDG_CONFIG_HOME points to, find
// -delete instead of rm, cp or mv over a file, a script written with
// write_file and run later, ssh host cmd (not checked: it runs remotely),
// docker, kubectl or nix-shell with a command. A deny rule on execute is
// a guard against mistakes and the obvious forms, not a sandbox: what
// contains a command that gets through is the sandbox (--sandbox bwrap),
// and what must never run is best denied by denying execute itself.
package permission
