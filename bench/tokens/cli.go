package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The task through the CLI itself: `deepagents run` as a user runs it, its
// configuration (prompt, memory and skills sections, the workspace on disk
// as the filesystem backend) and all, the provider's base URL pointed at
// the stand-in through the variables the official SDKs read.

// buildCLI builds the deepagents binary into dir, from the repository this
// module sits in (go.work joins the CLI's module).
func buildCLI(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "deepagents")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/deepagents-go/deepagents/cmd/deepagents")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build of the CLI: %w\n%s", err, out)
	}
	return bin, nil
}

// runCLITask runs the scripted task once with `deepagents run` in a
// workspace holding the task's files, against p's stand-in. Not the
// defaults: --auto-approve (the script's edits would otherwise wait for a
// person), and HOME, XDG folders and --db in a temporary folder.
func runCLITask(ctx context.Context, p provider, bin string) (*runResult, error) {
	steps := script()
	si, err := p.start(p.Model, steps)
	if err != nil {
		return nil, err
	}
	defer si.close()
	tmp, err := os.MkdirTemp("", "tokens-cli-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	ws, home := filepath.Join(tmp, "workspace"), filepath.Join(tmp, "home")
	files, err := workspace()
	if err != nil {
		return nil, err
	}
	for p, f := range files {
		path := filepath.Join(ws, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, []byte(f.Content), 0o644); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "run", "--model", p.Name+":"+p.Model, "--dir", ws,
		"--db", filepath.Join(tmp, "threads.db"), "--auto-approve", taskPrompt)
	key, url := "ANTHROPIC", "ANTHROPIC_BASE_URL"
	if p.Name == "openai" {
		key, url = "OPENAI", "OPENAI_BASE_URL"
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		key + "_API_KEY=bench", url + "=" + si.url}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("deepagents run failed after %d requests: %w\n%s", len(si.bodies()), err, out)
	}
	res := &runResult{Bodies: si.bodies(), Files: map[string]string{}}
	err = filepath.WalkDir(ws, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(ws, path)
		res.Files["/"+filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		return nil, err
	}
	if strings.Contains(string(out), finalAnswer) {
		res.Final = finalAnswer // the text output holds the answer as it came
	}
	if bad := res.problems(si, len(steps), nil); len(bad) > 0 {
		return res, errors.New("the task did not run as scripted through the CLI: " + strings.Join(bad, "; "))
	}
	return res, nil
}

// measureCLI runs and counts the task through the CLI for p.
func measureCLI(ctx context.Context, p provider, bin string) (*Report, error) {
	res, err := runCLITask(ctx, p, bin)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p.Name, err)
	}
	return count(p, res.Bodies, script())
}
