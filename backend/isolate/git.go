package isolate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gitEnv keeps the repository's hooks and the user's identity out of the
// commands the fork runs.
var gitEnv = []string{
	"GIT_AUTHOR_NAME=deepagents", "GIT_AUTHOR_EMAIL=deepagents@localhost",
	"GIT_COMMITTER_NAME=deepagents", "GIT_COMMITTER_EMAIL=deepagents@localhost",
	"GIT_TERMINAL_PROMPT=0",
}

// gitCmd runs git in dir with env added; its output, standard error
// included in the error.
func gitCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.hooksPath=/dev/null", "-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), gitEnv...), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", args[0], err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// gitTop reports whether dir is the top level of a git work tree.
func gitTop(ctx context.Context, dir string) (string, bool) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", false
	}
	out, err := gitCmd(ctx, dir, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", false
	}
	top := strings.TrimSpace(out)
	if realPath(top) != realPath(dir) {
		return "", false
	}
	return dir, true
}

// forkGit makes the workspace a worktree of the repository at top, its
// HEAD detached at a commit of the folder as it is now (what is committed,
// staged, changed and not ignored), made from a temporary index: the
// repository's index, branches and files stay as they are.
func (w *Workspace) forkGit(ctx context.Context, top string, g *Group) error {
	if g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.commit != "" {
			return w.addWorktree(ctx, top, g.commit)
		}
	}
	commit, err := w.snapshot(ctx, top)
	if err != nil {
		return err
	}
	if g != nil {
		g.commit = commit
	}
	return w.addWorktree(ctx, top, commit)
}

// addWorktree makes the workspace a worktree at commit.
func (w *Workspace) addWorktree(ctx context.Context, top, commit string) error {
	root := filepath.Join(w.temp, "work")
	if _, err := gitCmd(ctx, top, nil, "worktree", "add", "--detach", "--quiet", root, commit); err != nil {
		return err
	}
	w.Root, w.Kind, w.git, w.base = root, KindWorktree, top, gitBase{top: top, commit: commit}
	return nil
}

// snapshot commits the folder as it is now from a temporary index.
func (w *Workspace) snapshot(ctx context.Context, top string) (string, error) {
	index := filepath.Join(w.temp, "index")
	if p, err := gitCmd(ctx, top, nil, "rev-parse", "--path-format=absolute", "--git-path", "index"); err == nil {
		if err := copyIndex(strings.TrimSpace(p), index); err != nil {
			return "", err
		}
	}
	env := []string{"GIT_INDEX_FILE=" + index}
	if _, err := os.Stat(index); err != nil {
		// No index yet: start from HEAD, if there is one.
		if _, err := gitCmd(ctx, top, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
			if _, err := gitCmd(ctx, top, env, "read-tree", "HEAD"); err != nil {
				return "", err
			}
		}
	}
	if _, err := gitCmd(ctx, top, env, "add", "-A", "--", "."); err != nil {
		return "", err
	}
	tree, err := gitCmd(ctx, top, env, "write-tree")
	if err != nil {
		return "", err
	}
	args := []string{"commit-tree", strings.TrimSpace(tree), "-m", "deepagents: the folder as a subagent's workspace started from it"}
	if head, err := gitCmd(ctx, top, nil, "rev-parse", "--verify", "-q", "HEAD"); err == nil {
		args = append(args, "-p", strings.TrimSpace(head))
	}
	commit, err := gitCmd(ctx, top, nil, args...)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(commit), nil
}

func copyIndex(from, to string) error {
	in, err := os.Open(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// gitBase reads the fork's base from its commit.
type gitBase struct{ top, commit string }

func (g gitBase) read(ctx context.Context, rel string) ([]byte, bool, error) {
	out, err := gitCmd(ctx, g.top, nil, "ls-tree", "-z", g.commit, "--", rel)
	if err != nil {
		return nil, false, err
	}
	// "MODE TYPE OBJECT\tPATH\x00"; a regular file only.
	if out == "" || !strings.HasPrefix(out, "100") {
		return nil, false, nil
	}
	fields := strings.Fields(strings.SplitN(out, "\t", 2)[0])
	if len(fields) != 3 || fields[1] != "blob" {
		return nil, false, nil
	}
	blob, err := gitCmd(ctx, g.top, nil, "cat-file", "blob", fields[2])
	if err != nil {
		return nil, false, err
	}
	return []byte(blob), true, nil
}
