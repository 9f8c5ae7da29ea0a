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
// included in the error. The repository may be hostile: its own config
// can name commands git runs by itself (hooks, an fsmonitor, the clean,
// smudge and process commands of filter drivers), and these git commands
// run on the host, outside any sandbox, without the model asking. Each is
// switched off on the command line, which outranks the repository's
// config (TestHostileRepositoryRunsNothing).
func gitCmd(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return runGit(ctx, dir, env, append(disarm(ctx, dir), args...)...)
}

// disarm returns the -c options that keep git from running any command
// the repository's config names.
func disarm(ctx context.Context, dir string) []string {
	opts := []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}
	// Reading the config runs nothing. Its filter drivers, includes
	// followed, are each emptied: an empty command is no filter.
	out, _ := runGit(ctx, dir, nil, "-c", "core.fsmonitor=false", "config", "-z", "--name-only", "--get-regexp", `^filter\.`)
	seen := map[string]bool{}
	for _, key := range strings.Split(out, "\x00") {
		i := strings.LastIndexByte(key, '.')
		if !strings.HasPrefix(key, "filter.") || i <= len("filter") {
			continue
		}
		driver := key[:i] // filter.NAME, NAME may hold dots
		if seen[driver] {
			continue
		}
		seen[driver] = true
		opts = append(opts, "-c", driver+".clean=", "-c", driver+".smudge=", "-c", driver+".process=", "-c", driver+".required=false")
	}
	return opts
}

// runGit runs git in dir with exactly the options given.
func runGit(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(append(os.Environ(), gitEnv...), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("git %s: %w: %s", gitVerb(args), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// gitVerb is the subcommand of args, past the -c options.
func gitVerb(args []string) string {
	for i := 0; i < len(args); i++ {
		if args[i] == "-c" {
			i++
			continue
		}
		return args[i]
	}
	return ""
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
func (w *Workspace) forkGit(ctx context.Context, top string, opts Options) error {
	g := opts.Group
	if g != nil {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.commit != "" {
			return w.addWorktree(ctx, top, g.commit)
		}
	}
	commit, err := w.snapshot(ctx, top, opts)
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
func (w *Workspace) snapshot(ctx context.Context, top string, opts Options) (string, error) {
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
	// git add writes each untracked file into the repository's objects:
	// bounded, as a copy is, before anything is written.
	if err := untrackedWithin(ctx, top, env, opts); err != nil {
		return "", err
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

// untrackedWithin checks that the folder's untracked files that are not
// ignored (what a snapshot adds to the repository) are within opts'
// limits: ErrTooLarge otherwise.
func untrackedWithin(ctx context.Context, top string, env []string, opts Options) error {
	maxFiles, maxBytes := opts.limits()
	out, err := gitCmd(ctx, top, env, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
	if err != nil {
		return err
	}
	files, total := 0, int64(0)
	for name := range strings.SplitSeq(strings.TrimSuffix(out, "\x00"), "\x00") {
		if name == "" {
			continue
		}
		files++
		if info, err := os.Lstat(filepath.Join(top, filepath.FromSlash(name))); err == nil && info.Mode().IsRegular() {
			total += info.Size()
		}
		if files > maxFiles || total > maxBytes {
			return fmt.Errorf("%w (its untracked files: more than %d files or %d bytes, the most a snapshot adds to the repository)", ErrTooLarge, maxFiles, maxBytes)
		}
	}
	return nil
}
