package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// The deepagents-js side: the same scripted task, through createDeepAgent
// (npm deepagents 1.14.1) with its defaults, run by js/driver.mjs under
// node, its model LangChain's ChatAnthropic or ChatOpenAI pointed at the
// same recording stand-in. The recorded requests are counted as ours are.

// jsTimeout bounds one node run: it takes a few seconds.
const jsTimeout = 2 * time.Minute

// errNoJS says node or the driver's npm packages are missing.
var errNoJS = errors.New("deepagents-js is not installed")

// jsDir returns the directory of the Node driver, with its node_modules
// installed (npm ci), or errNoJS saying what is missing.
func jsDir() (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("%w: no node in PATH", errNoJS)
	}
	var dirs []string
	if _, file, _, ok := runtime.Caller(0); ok {
		dirs = append(dirs, filepath.Join(filepath.Dir(file), "js"))
	}
	dirs = append(dirs, "js", filepath.Join("bench", "tokens", "js"))
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "driver.mjs")); err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "node_modules", "deepagents", "package.json")); err != nil {
			return "", fmt.Errorf("%w: run `npm ci` in %s", errNoJS, d)
		}
		return d, nil
	}
	return "", fmt.Errorf("%w: no js/driver.mjs found", errNoJS)
}

// jsInput is what the driver reads on stdin.
type jsInput struct {
	Provider string            `json:"provider"`
	Model    string            `json:"model"`
	BaseURL  string            `json:"base_url"`
	Prompt   string            `json:"prompt"`
	Files    map[string]string `json:"files"`
	Time     string            `json:"time"`
}

// jsOutput is the driver's result line.
type jsOutput struct {
	Final  string            `json:"final"`
	Files  map[string]string `json:"files"`
	Errors []string          `json:"errors"`
}

// jsScript returns the task's turns as deepagents-js is given them. Its
// tools take the same names and arguments as ours (ls path; read_file
// file_path, offset, limit, both 0-based; write_file file_path, content;
// edit_file file_path, old_string, new_string; glob pattern; grep pattern,
// output_mode; task description, subagent_type), so the calls are the same,
// with one exception: createDeepAgent's defaults have no write_todos (in
// 1.14.1 only the Codex harness profiles add the todo middleware; with
// Claude and GPT-4.1 its tools are ls, read_file, write_file, edit_file,
// delete, glob, grep and task). With KeepTodos the script is played
// unchanged and the three write_todos calls are answered with its "not a
// valid tool" error; without, they are taken out: a turn left with no call
// is dropped and its text joins the next turn's (22 requests: main 18,
// subagent 4), as a model that is offered no todo tool would do.
//
// deepagents-js's read_file shows 100 lines unless given a limit (ours
// 2,000), so each of the script's nine whole-file reads shows it a file's
// first 100 lines. With pages, each is followed by the reads a model would
// make to see the rest, 100 lines at a time from the offset the result
// names, so that both harnesses read the same text.
func jsScript(o jsOptions) []step {
	steps := script()
	if o.Pages {
		steps = withPages(steps)
	}
	if o.KeepTodos {
		return steps
	}
	var out []step
	carry := ""
	for _, s := range steps {
		var calls []call
		for _, c := range s.Calls {
			if c.Name != "write_todos" {
				calls = append(calls, c)
			}
		}
		text := joinText(carry, s.Text)
		carry = ""
		if len(s.Calls) > 0 && len(calls) == 0 {
			carry = text
			continue
		}
		out = append(out, step{Agent: s.Agent, Text: text, Calls: calls})
	}
	return out
}

// jsOptions are the ways the script is adapted to deepagents-js.
type jsOptions struct {
	// KeepTodos plays the write_todos turns, answered with an error.
	KeepTodos bool
	// Pages reads each file read whole in deepagents-js's pages.
	Pages bool
}

// jsReadLimit is deepagents-js's default read_file limit.
const jsReadLimit = 100

// withPages adds, after each read of a whole file (no limit) of more than
// jsReadLimit lines, the agent's reads of its next pages.
func withPages(steps []step) []step {
	files, err := workspace()
	if err != nil {
		return steps // the run reports the archive's error
	}
	var out []step
	for _, s := range steps {
		out = append(out, s)
		if len(s.Calls) != 1 || s.Calls[0].Name != "read_file" {
			continue
		}
		var a struct {
			FilePath string `json:"file_path"`
			Limit    *int   `json:"limit"`
		}
		if json.Unmarshal([]byte(s.Calls[0].Args), &a) != nil || a.Limit != nil {
			continue
		}
		content := files[a.FilePath].Content
		lines := strings.Count(content, "\n")
		if !strings.HasSuffix(content, "\n") {
			lines++
		}
		for off := jsReadLimit; off < lines; off += jsReadLimit {
			out = append(out, step{Agent: s.Agent, Calls: []call{{Name: "read_file",
				Args: args(map[string]any{"file_path": a.FilePath, "offset": off})}}})
		}
	}
	return out
}

func joinText(a, b string) string {
	if a == "" || b == "" {
		return a + b
	}
	return a + " " + b
}

// jsTodoError is how deepagents-js answers a call of a tool it does not
// offer; with KeepTodos, write_todos is answered so.
const jsTodoError = "write_todos: Error: write_todos is not a valid tool"

// runJS runs the scripted task once through deepagents-js, the driver in
// dir, talking to p's stand-in, and checks it ran as scripted.
func runJS(ctx context.Context, p provider, dir string, o jsOptions) (*runResult, error) {
	steps := jsScript(o)
	si, err := p.start(p.Model, steps)
	if err != nil {
		return nil, err
	}
	defer si.close()
	files, err := workspace()
	if err != nil {
		return nil, err
	}
	in := jsInput{Provider: p.Name, Model: p.Model, BaseURL: si.url, Prompt: taskPrompt,
		Files: map[string]string{}, Time: workspaceTime.Format("2006-01-02T15:04:05.000Z")}
	for path, f := range files {
		in.Files[path] = f.Content
	}
	stdin, err := json.Marshal(in)
	if err != nil {
		return nil, fmt.Errorf("deepagents-js input: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, jsTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "driver.mjs")
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("deepagents-js failed after %d requests: %w\n%s", len(si.bodies()), err, lastLines(stderr.String(), 20))
	}
	var out jsOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("deepagents-js output: %w\n%s", err, lastLines(stdout.String(), 5))
	}
	res := &runResult{Bodies: si.bodies(), Files: out.Files, Final: out.Final}
	var failed []string
	for _, e := range out.Errors {
		if o.KeepTodos && strings.HasPrefix(e, jsTodoError) {
			continue
		}
		failed = append(failed, "a tool failed: "+e)
	}
	if bad := res.problems(si, len(steps), failed); len(bad) > 0 {
		return res, errors.New("the task did not run as scripted: " + strings.Join(bad, "; "))
	}
	return res, nil
}

// measureJS runs the task once through deepagents-js on p's stand-in and
// counts its requests.
func measureJS(ctx context.Context, p provider, dir string, o jsOptions) (*Report, *runResult, error) {
	res, err := runJS(ctx, p, dir, o)
	if err != nil {
		return nil, res, fmt.Errorf("deepagents-js, %s: %w", p.Name, err)
	}
	rep, err := count(p, res.Bodies, jsScript(o))
	return rep, res, err
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
