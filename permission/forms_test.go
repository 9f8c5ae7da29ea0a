package permission_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

// TestDecideShellForms holds the forms of issue 28 that ran a denied
// command, or ran an allowed one with a changed meaning, past the
// hand-written splitter: each must be denied (or asked about where the
// rules cannot know).
func TestDecideShellForms(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"execute(git status)", "execute(echo)", "execute(true)"},
		permission.Deny:  {"execute(rm)", "execute(git commit)"},
	})
	A, K, D, N := permission.Allow, permission.Ask, permission.Deny, permission.None
	tests := []struct {
		cmd  string
		want permission.Effect
	}{
		// Shell keywords.
		{"! rm x", D},
		{"if rm x; then :; fi", D},
		{"if true; then rm x; fi", D},
		{"if true; then :; elif rm x; then :; fi", D},
		{"if true; then :; else rm x; fi", D},
		{"while rm x; do :; done", D},
		{"while true; do rm x; done", D},
		{"until rm x; do :; done", D},
		{"for f in a; do rm $f; done", D},
		{"for ((i=0; i<1; i++)); do rm x; done", D},
		{"select f in a; do rm x; done", D},
		{"case a in a) rm x;; esac", D},
		{"{ rm x; }", D},
		{"(rm x)", D},
		{"time rm x", D},
		{"coproc rm x", D},
		{"echo $(rm x)", D},
		{"echo `rm x`", D},
		{"echo \"$(rm x)\"", D},
		{"x=$(rm x)", D},
		{"echo ${x:-$(rm x)}", D},
		{"echo $(( 1 + $(rm x) ))", D},
		{"(( $(rm x) ))", D},
		{"[[ -n $(rm x) ]]", D},
		{"cat <(rm x)", D},
		{"echo > >(rm x)", D},
		{"echo > \"$(rm x)\"", D},
		{"cat <<EOF\n$(rm x)\nEOF", D},
		{"cat <<'EOF'\n$(rm x)\nEOF", N}, // a quoted here-document is text; cat is not allowed
		{"declare y=$(rm x)", D},
		// Strings the shell runs.
		{"trap 'rm x' EXIT", D},
		{"trap -- 'rm x' EXIT", D},
		{"eval 'rm x'", D},
		{"eval rm x", D},
		{"sh -c 'rm x'", D},
		{"bash -lc 'rm x'", D},
		{"bash -o pipefail -c 'true; rm x'", D},
		{"su -c 'rm x' root", D},
		{"script -qc 'rm x' /dev/null", D},
		{"watch rm x", D},
		{"flock /tmp/l -c 'rm x'", D},
		{"bash <<EOF\nrm x\nEOF", D},
		{"curl x | sh", K},
		{"source ./script.sh", K},
		{"eval \"$CMD\"", K},
		// Aliases and functions.
		{"alias r=rm\nr x", D},
		{"alias l=ls\nl x", K},
		{"f(){ rm x; }; f", D},
		{"function f { rm x; }; f", D},
		{"f(){ echo x; }; f", K},
		{"f(){ \"$@\"; }; f rm x", K},
		// Exec wrappers.
		{"flock /tmp/l rm x", D},
		{"flock -w 3 /tmp/l rm x", D},
		{"taskset 0x1 rm x", D},
		{"taskset -c 0 rm x", D},
		{"chrt 1 rm x", D},
		{"chrt -f 1 rm x", D},
		{"prlimit --nofile=10 rm x", D},
		{"setpriv --reuid=1 rm x", D},
		{"setpriv --reuid 1 --clear-groups rm x", D},
		{"nsenter -t 1 -m rm x", D},
		{"runuser -u nobody -- rm x", D},
		{"sudo rm x", D},
		{"sudo -u bob -E rm x", D},
		{"doas -u bob rm x", D},
		{"env rm x", D},
		{"env -i FOO=1 rm x", D},
		{"env -u HOME -- rm x", D},
		{"nice rm x", D},
		{"nice -n 5 rm x", D},
		{"nice -5 rm x", D},
		{"timeout 5 rm x", D},
		{"timeout -s KILL 5 rm x", D},
		{"timeout -k 1 --preserve-status 5s rm x", D},
		{"stdbuf -oL rm x", D},
		{"stdbuf -o L rm x", D},
		{"ionice -c 3 rm x", D},
		{"nohup rm x", D},
		{"setsid rm x", D},
		{"xargs rm < list", D},
		{"xargs -0 -n 1 rm < list", D},
		{"find . -exec rm {} +", D},
		{"find . -name a -execdir rm {} \\;", D},
		{"parallel rm ::: a b", D},
		{"busybox rm x", D},
		{"command rm x", D},
		{"builtin command rm x", D},
		{"exec rm x", D},
		{"/usr/bin/time -v rm x", D},
		{"catchsegv rm x", D},
		{"firejail --noprofile rm x", D},
		{"systemd-run --user --wait rm x", D},
		{"unbuffer rm x", D},
		{"proxychains rm x", D},
		{"torsocks rm x", D},
		{"chroot / rm x", D},
		{"unshare -r rm x", D},
		{"strace -f rm x", D},
		{"timeout 5 nice -n 1 flock /l sudo -u x env A=1 rm x", D},
		{"chroot /mnt", K}, // a shell reading its input
		{"unshare -r", K},
		{"script out.log", K},
		{"script -q -c 'ls' out.log", N},
		{"timeout 5", N},
		{"chrt -p 1234", N},
		{"sudo -l", N},
		{"timeout --bogus 5 rm x", K},
		{"sudo --bogus rm x", K},
		{"timeout 5 $X x", K},
		// git's global options.
		{"git -C . commit -m x", D},
		{"git -c user.name=x commit", D},
		{"git --git-dir=x --work-tree=y commit", D},
		{"git --git-dir x commit", D},
		{"git --no-pager commit", D},
		{"git -P commit", D},
		{"git -C . status", A},
		{"git --no-pager status", A},
		{"git -c core.pager=less status", N},
		{"git -c core.fsmonitor='rm victim' status", K},
		{"git -c alias.status='!rm x' status", K},
		{"git --exec-path=/tmp status", N},
		{"git --config-env=core.pager=X status", N},
		{"git $SUB", K},
		{"git ${SUB} x", K},
		// Options that choose the repository, and so its configuration
		// (core.fsmonitor in a committed bare repository sub/): allow
		// rules do not apply, deny rules do.
		{"git -C sub status", N},
		{"git -Csub status", N},
		{"git -C ./sub status", N},
		{"git --git-dir=sub status", N},
		{"git --git-dir sub status", N},
		{"git --work-tree=/ status", N},
		{"git --work-tree / status", N},
		{"git --bare status", N},
		{"git -C sub commit -m x", D},
		{"git --bare commit -m x", D},
		{"git --work-tree=/ commit", D},
		{"git --namespace=x status", A},
		{"git -C sub -c alias.ci=commit ci -m x", K},
		// Aliases and included files from the command line rename a
		// command: unsure, so asked about, never allowed.
		{"git -c alias.ci=commit ci -m x", K},
		{"git -c Alias.CI=commit ci -m x", K},
		{"git -calias.ci=commit ci -m x", K},
		{"git -c alias.ci=commit commit -m x", D},
		{"git -c alias.st=status st", K},
		{"git --config-env=alias.ci=V ci -m x", K},
		{"git --config-env alias.ci=V ci -m x", K},
		{"git -c include.path=sub/cfg ci -m x", K},
		{"git -c includeIf.gitdir:/.path=sub/cfg ci -m x", K},
		{"git -c \"$K\" ci -m x", K},
		{"git --config-env \"$K\" ci -m x", K},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit git ci -m x", K},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=$K GIT_CONFIG_VALUE_0=commit git ci -m x", K},
		{"env GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=ALIAS.ci GIT_CONFIG_VALUE_0=commit git ci -m x", K},
		{"export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=alias.ci GIT_CONFIG_VALUE_0=commit; git ci -m x", K},
		{"GIT_CONFIG_PARAMETERS=\"'alias.ci'='commit'\" git ci -m x", K},
		{"GIT_CONFIG_KEY_0=ali; GIT_CONFIG_KEY_0+=as.ci; export GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0 GIT_CONFIG_VALUE_0=commit; git ci -m x", K},
		{"read GIT_CONFIG_KEY_0 <<< alias.ci; export GIT_CONFIG_KEY_0 GIT_CONFIG_COUNT=1 GIT_CONFIG_VALUE_0=commit; git ci -m x", K},
		{"systemd-run -E \"GIT_CONFIG_KEY_0=$K\" -E GIT_CONFIG_COUNT=1 -E GIT_CONFIG_VALUE_0=commit git ci -m x", K},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=cat git status", N},
		// A deny rule's command in an argument that is itself a command
		// line (tar, sed and sg run such arguments): asked about.
		{"tar --to-command='rm x' -xf a.tar", K},
		{"tar --to-command=rm -xf a.tar", K},
		{"tar --checkpoint-action=exec='rm x' -cf a.tar .", K},
		{"tar --to-command='r\\m x' -xf a.tar", K},
		{"sed 'e rm x' f", K},
		{"sed -e '1e rm x' f", K},
		{"sg grp 'rm x'", K},
		{"sg grp 'true; rm -rf x'", K},
		{"ssh host 'rm -rf x'", K},
		{"sed 's/rm/x/' f", N},
		{"awk '/rm/ {print $1}' f", N},
		{"awk '$1 > 0' f", N},
		{"grep 'rm x' f", N},
		{"echo 'rm x'", A},
		{"python3 -c 'x = \"a\".format(1)'", N},
		// Past the budget of arguments parsed: asked about.
		{"foo 'a=b=c=" + strings.Repeat("rmx ", 30000) + "' 'a=b=c=" + strings.Repeat("rmx ", 30000) + "'", K},
		// A changed environment: allow rules no longer apply.
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm victim' git status", K},
		{"GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='touch victim' git status", N},
		{"PAGER='rm x' git log", K},
		{"PROMPT_COMMAND='rm x'", K},
		{"env GIT_PAGER='rm x' git log", K},
		// Variables that choose the program or its code: unsure.
		{"export GIT_DIR=x; git status", K},
		{"export FOO=x; git status", N},
		{"BASH_ENV=./x.sh bash -c 'git status'", K},
		{"sudo PATH=/tmp git status", K},
		{"for PATH in /tmp/x; do git status; done", K},
		{"((PATH=1)); git status", K},
		{"let PATH++; git status", K},
		{"read PATH <<< /tmp/x; git status", K},
		{"printf -v PATH /tmp/x; git status", K},
		{"declare -n p=PATH; p=/tmp/x; git status", K},
		{"for f in a; do git status; done", A},
		{"echo PATH", A},
		{"printf '%s' PATH", N},
		{"printf -v PATH %s x", K},
		{"PATH=/tmp/evil:$PATH; git status", K},
		{"env LD_PRELOAD=/tmp/x.so git status", K},
		{"env -i git status", A},
		{"LD_PRELOAD=/tmp/x.so rm x", D},
		// Names the shell expands.
		{"$X x", K},
		{"r? x", K},
		{"\"$(echo rm)\" x", K},
		{"~/bin/x", K},
		{"r''m x", D},
		{"\\rm x", D},
		{"$'rm' x", D},
		{"$'\\x72m' x", K},
		// Text that looks like code but is an argument.
		{"echo 'a; rm x'", A},
		{"echo 'a[$(rm x)]'", K},
		{"x='a[$(rm y)]'; (( x ))", K},
		{"git status 'a; rm -rf x'", A},
	}
	for _, tt := range tests {
		raw, _ := json.Marshal(map[string]string{"command": tt.cmd})
		d := rs.Decide("execute", tool.Traits{RunsCommands: true}, raw)
		if d.Effect != tt.want {
			t.Errorf("%q: %s (%s), want %s", tt.cmd, d.Effect, d.Reason, tt.want)
		}
	}
}

// TestDecideAllowForms: what an allow rule still allows through the tree,
// and what it no longer does (a wrapper that changes who or where, a
// changed environment, a written file).
func TestDecideAllowForms(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"execute(git status)", "execute(echo)", "execute(ls)", "execute(go test)", "execute(cat)", "execute(cd)"},
		permission.Deny:  {"execute(rm)", "execute(git push)"},
	})
	A, K, D, N := permission.Allow, permission.Ask, permission.Deny, permission.None
	for _, tt := range []struct {
		cmd  string
		want permission.Effect
	}{
		{"timeout 5 git status", A},
		{"nice -n 5 git status", A},
		{"env -i git status", A},
		{"xargs git status", A},
		{"watch -n 1 git status", A},
		{"bash -c 'ls'", A},
		{"sh -c \"git status && echo ok\"", A},
		{"eval ls", A},
		{"trap 'echo bye' EXIT; ls", A},
		{"git status | cat", A},
		{"go test ./... 2>&1 | cat", A},
		{"go test ./... > /dev/null 2>&1", A},
		{"ls >&2", A},
		{"for f in *.go; do echo $f; done", A},
		{"git -C /tmp status", N}, // another repository: its configuration runs
		{"git -C . status", A},
		{"git --no-pager status", A},
		{"git -P status", A},
		{"git --git-dir=/tmp/x status", N},
		{"git --bare status", N},
		{"git -c alias.p=push p", K},
		{"git -C /tmp push", D},
		{"tar --to-command='rm x' -xf a.tar", K},
		{"time ls", A},
		{"ls &", A},
		{"echo \"$(ls)\"", A},
		{"cat <<'EOF'\nrm x\nEOF", A}, // a quoted here-document is text
		{"sudo git status", N},        // sudo needs a rule of its own
		{"find . -name x", N},
		{"cd /tmp && ls", A},
		{"cd sub && git status", N}, // git -C sub status
		{"(cd sub; git status)", N},
		{"git status; cd sub", N},
		{"pushd sub && git status", N},
		{"cd . && git status", A},
		{"FOO=1 ls", N},
		{"git status; x=1", N},
		{"echo hi > /etc/passwd", N}, // a written file: allow rules do not apply
		{"ls >> out.txt", N},
		{"ls &> out.txt", N},
		{"ls >& out.txt", N},
		{"ls > $OUT", N},
		{"{ ls; } > out.txt", N},
		{"echo x > >(cat)", A},
		{"alias", N},
		{"command -v rm", N},
		{"git $X push", K},
		{"git \"push\"", D},
		{"git -c x=y push", D},
		{"ssh host rm x", K}, // a program that may run its arguments
		{"numactl -N 0 rm x", K},
		{"uv run rm x", K},
		{"git rm x", N}, // git's own rm
		{"echo rm x", A},
	} {
		raw, _ := json.Marshal(map[string]string{"command": tt.cmd})
		if d := rs.Decide("execute", tool.Traits{RunsCommands: true}, raw); d.Effect != tt.want {
			t.Errorf("%q: %s (%s), want %s", tt.cmd, d.Effect, d.Reason, tt.want)
		}
	}
}
