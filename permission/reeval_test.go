package permission_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/permission"
	"github.com/deepagents-go/deepagents/tool"
)

// TestDecideReevaluation holds the forms of issue 42: bash evaluates a
// value the rules cannot see as code again ($_ in arithmetic, ${!x},
// ${x@P}, a subscript), and programs run commands their options name (man
// -P, MANPAGER, less +!, vim -c, awk's system(), git's pager). None is
// allowed by an allow rule, and a denied command in them is not let by.
func TestDecideReevaluation(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"execute(git status)", "execute(echo)", "execute(man)", "execute(less)", "execute(vim)", "execute(awk)", "execute(git log)"},
		permission.Deny:  {"execute(rm)"},
	})
	A, K, D := permission.Allow, permission.Ask, permission.Deny
	for _, tt := range []struct {
		cmd  string
		want []permission.Effect // any of these
	}{
		// The break of the issue, and its neighbours.
		{`git status 'a[$(touch pwned)]' >/dev/null 2>&1; git status $((_))`, []permission.Effect{K}},
		{`bash -c "git status 'a[\$(touch pwned)]' >/dev/null 2>&1; git status \$((_))"`, []permission.Effect{K}},
		{`echo 'a[$(touch pwned)]'; echo ${_@P}`, []permission.Effect{K}},
		{`echo x; echo ${!_}`, []permission.Effect{K}},
		{`echo ${!name}`, []permission.Effect{K}},
		{`echo ${x@P}`, []permission.Effect{K}},
		{`echo $((x))`, []permission.Effect{K}},
		{`echo $(( x + 1 ))`, []permission.Effect{K}},
		{`(( x ))`, []permission.Effect{K}},
		{`let x`, []permission.Effect{K}},
		{`echo ${a[x]}`, []permission.Effect{K}},
		{`[[ $x -eq 1 ]] && echo y`, []permission.Effect{K}},
		{`echo 'a[$(rm x)]'; echo $((_))`, []permission.Effect{K, D}},
		// Arithmetic over what the rules know stays allowed.
		{`echo $((1 + 2))`, []permission.Effect{A}},
		{`i=3; echo $((i * 2))`, []permission.Effect{A, permission.None}}, // None: the line assigns
		{`for ((i=0; i<3; i++)); do echo $i; done`, []permission.Effect{A}},
		{`for i in 1 2 3; do echo $((i+1)); done`, []permission.Effect{A}},
		{`echo $(( $# + 1 ))`, []permission.Effect{A}},
		{`echo "${a[@]}" ${#a[@]} ${a[0]}`, []permission.Effect{A}},
		{`echo ${!prefix*}`, []permission.Effect{A}},
		// Programs that run what their options name.
		{`man -P 'rm x' ls`, []permission.Effect{D, K}},
		{`man --pager='rm x' ls`, []permission.Effect{D, K}},
		{`man -Prm ls`, []permission.Effect{D, K}},
		{`MANPAGER='rm x' man ls`, []permission.Effect{D, K}},
		{`PAGER='rm x' man ls`, []permission.Effect{D, K}},
		{`less '+!rm x' f`, []permission.Effect{D, K}},
		{`vim -c '!rm x' f`, []permission.Effect{D, K}},
		{`vim '+!rm x' f`, []permission.Effect{D, K}},
		{`awk 'BEGIN{system("rm x")}'`, []permission.Effect{D, K}},
		{`awk 'BEGIN{print | "rm x"}'`, []permission.Effect{D, K}},
		{`git -c core.pager='rm x' log`, []permission.Effect{D, K}},
		{`GIT_PAGER='rm x' git log`, []permission.Effect{D, K}},
		// Those programs on their own stay allowed.
		{`man ls`, []permission.Effect{A}},
		{`man rm`, []permission.Effect{A}},
		{`less f`, []permission.Effect{A}},
		{`vim f`, []permission.Effect{A}},
		{`awk '{print $1}' f`, []permission.Effect{A}},
		{`git log`, []permission.Effect{A}},
	} {
		checkOneOf(t, rs, tt.cmd, tt.want)
	}
}

// A read rule hides a file from the file tools and the sandbox, not what
// git keeps of it: a git command that prints committed content asks when
// a read_file deny rule exists (issue 42: git show HEAD:.env).
func TestDecideGitPrintsWhatReadRulesHide(t *testing.T) {
	withRead := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"execute(git status)", "execute(git log)", "execute(git show)"},
		permission.Deny:  {"read_file(**/.env)"},
	})
	readOnly := mustRules(t, map[permission.Effect][]string{permission.Deny: {"read_file(**/.env)"}})
	without := mustRules(t, map[permission.Effect][]string{permission.Allow: {"execute(git show)"}})
	K, A, N := permission.Ask, permission.Allow, permission.None
	for _, tt := range []struct {
		rs   *permission.Rules
		cmd  string
		want permission.Effect
	}{
		{withRead, "git show HEAD:.env", K},
		{withRead, "git -C . show HEAD:.env", K},
		{withRead, "git --no-pager cat-file -p HEAD:.env", K},
		{readOnly, "git cat-file -p HEAD:.env", K},
		{readOnly, "git log -p", K},
		{readOnly, "git diff HEAD~1", K},
		{readOnly, "git grep SECRET", K},
		{readOnly, "git archive HEAD | tar -x -O", K},
		{readOnly, "git stash show -p", K},
		{readOnly, "git log -U3", K},
		{readOnly, "git log -pU3", K},
		{readOnly, "git log --word-diff", K},
		{readOnly, "git log --cc", K},
		{readOnly, "git log --patch-with-stat", K},
		{readOnly, "git reflog -p", K},
		{readOnly, "git diff-tree -p HEAD", K},
		{readOnly, "git diff-index -p HEAD", K},
		{readOnly, "git range-diff a...b", K},
		{readOnly, "git unpack-file HEAD:.env", K},
		{readOnly, "git checkout-index --temp .env", K},
		{readOnly, "git log -n 5 --oneline", N},
		{mustRules(t, map[permission.Effect][]string{permission.Deny: {"read_file"}}), "git show HEAD:x", K},
		{readOnly, "x=show; git $x HEAD:.env", K},
		{withRead, "git status", A},
		{withRead, "git log --oneline", A},
		{readOnly, "git log --oneline", N},
		{readOnly, "git commit -m x", N},
		{without, "git show HEAD:.env", A},
	} {
		raw, _ := json.Marshal(map[string]string{"command": tt.cmd})
		if d := tt.rs.Decide("execute", tool.Traits{RunsCommands: true}, raw); d.Effect != tt.want {
			t.Errorf("%s: %s (%s), want %s", tt.cmd, d.Effect, d.Reason, tt.want)
		}
	}
}

// TestDecideReevaluationMore holds the forms a review found past the
// first round: C-style loops with parts left out (which once panicked and
// so hid a denied command inside an argument), slices, element
// indirection, -v tests, names that printf -v and read set, and the
// programs' option forms joined or clustered.
func TestDecideReevaluationMore(t *testing.T) {
	rs := mustRules(t, map[permission.Effect][]string{
		permission.Allow: {"execute(echo)", "execute(ssh)", "execute(tar)", "execute(printf)", "execute(read)", "execute(test)",
			"execute(vim)", "execute(awk)", "execute(gawk)", "execute(man)"},
		permission.Deny: {"execute(rm)"},
	})
	A, K, D, N := permission.Allow, permission.Ask, permission.Deny, permission.None
	for _, tt := range []struct {
		cmd  string
		want []permission.Effect
	}{
		{`read i; bash -c 'i=1'; echo $((i))`, []permission.Effect{K}}, // a child's numbers are its own
		{`bash -c 'i=1'; echo $((i))`, []permission.Effect{K}},
		{`for ((;;)); do echo x; break; done`, []permission.Effect{A, N}}, // break has no rule
		{`for ((i=0;;i++)); do echo x; break; done`, []permission.Effect{A, N}},
		{`ssh h 'for ((;;)); do rm -rf x; break; done'`, []permission.Effect{K, D}},
		{`tar -cf a.tar --checkpoint-action=exec='for ((;;)); do rm -rf x; break; done' .`, []permission.Effect{K, D}},
		{`echo 'a[$(touch p)]' >/dev/null; echo ${PATH:_:1}`, []permission.Effect{K}},
		{`echo ${PATH:0:_}`, []permission.Effect{K}},
		{`echo ${PATH:$y}`, []permission.Effect{K}},
		{`echo ${PATH:1:2}`, []permission.Effect{A}},
		{`[[ 'a[$(touch p)]' =~ .* ]]; echo ${!BASH_REMATCH[0]}`, []permission.Effect{K}},
		{`[[ -v a[_] ]]; echo`, []permission.Effect{K}},
		{`test -v 'a[$(touch p)]'`, []permission.Effect{K}},
		{`printf -v 'a[$(touch p)]' %s x`, []permission.Effect{K}},
		{`read 'a[$(touch p)]' <<<x`, []permission.Effect{K}},
		{`for i in 1; do printf -v i %s 'a[$(touch q)]'; echo $((i)); done`, []permission.Effect{K}},
		{`vim -c'!touch p' f`, []permission.Effect{K, N}}, // N: touch needs a rule of its own
		{`vim -Rc'!touch p' f`, []permission.Effect{K}},
		{`vim -u rc.vim f`, []permission.Effect{K}},
		{`vim -s keys f`, []permission.Effect{K}},
		{`awk -E f.awk`, []permission.Effect{K}},
		{`gawk --exec=f.awk`, []permission.Effect{K}},
		{`gawk -i lib.awk '{print}'`, []permission.Effect{K}},
		{`gawk -l ext '{print}'`, []permission.Effect{K}},
		{`awk 'BEGIN{f="sys" "tem"; @f("touch p")}'`, []permission.Effect{K}},
		{`man -aP 'touch p' ls`, []permission.Effect{K, N}},
		{`man -aP 'rm x' ls`, []permission.Effect{D, K}},
		{`vim -c'!rm x' f`, []permission.Effect{D, K}},
		{`man -C conf ls`, []permission.Effect{K}},
		{`man -a ls`, []permission.Effect{A}},
	} {
		checkOneOf(t, rs, tt.cmd, tt.want)
	}
}

// checkOneOf checks that the rules decide cmd with one of the effects.
func checkOneOf(t *testing.T, rs *permission.Rules, cmd string, want []permission.Effect) {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"command": cmd})
	d := rs.Decide("execute", tool.Traits{RunsCommands: true}, raw)
	if !slices.Contains(want, d.Effect) {
		t.Errorf("%s: %s (%s), want one of %v", cmd, d.Effect, d.Reason, want)
	}
}
