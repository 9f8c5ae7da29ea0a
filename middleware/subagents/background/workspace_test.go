//go:build unix

package background_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/isolate"
	"github.com/deepagents-go/deepagents/backend/sandbox"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/middleware/hitl"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/tool"
)

// folder is a host folder the main agent and its background subagent
// "writer" share (or not) through the file tools, with the workspaces'
// folder beside it.
type folder struct {
	dir, tmp string
	files    *filesystem.Middleware
	holding  chan struct{} // the writer is in hold
	release  chan struct{} // hold returns
	// told, when set, makes hold stubborn: told its run is cancelled,
	// it says so on told and still waits for release.
	told chan struct{}
	// maxFiles bounds a copy (isolate.Options.MaxFiles).
	maxFiles int
	opts     background.Options
}

// newFolder makes the folder with files, under git when withGit (hooks
// off, HOME a temporary folder).
func newFolder(t *testing.T, withGit bool, files map[string]string) *folder {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	f := &folder{dir: t.TempDir(), tmp: t.TempDir(), holding: make(chan struct{}, 4), release: make(chan struct{})}
	for p, s := range files {
		f.write(t, p, s)
	}
	if withGit {
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-qm", "base"}} {
			f.git(t, args...)
		}
	}
	fsb, err := backend.NewFilesystemBackend(f.dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.files, err = filesystem.New(filesystem.Config{Backend: fsb}); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *folder) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "core.hooksPath=/dev/null", "-C", f.dir}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func (f *folder) write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, p), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *folder) read(t *testing.T, p string) (string, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, p))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

// workspaces returns what is left in the workspaces' folder.
func (f *folder) workspaces(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(f.tmp)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// hold is a tool that says it is held and waits until released.
func (f *folder) hold() tool.Tool {
	return tool.Must(tool.New("hold", "Waits.", func(ctx context.Context, _ struct{}) (string, error) {
		f.holding <- struct{}{}
		select {
		case <-f.release:
			return "released", nil
		case <-ctx.Done():
			if f.told == nil {
				return "", context.Cause(ctx)
			}
			f.told <- struct{}{}
			<-f.release
			return "", context.Cause(ctx)
		}
	}))
}

// agent builds the main agent with the folder's file tools and the
// background subagent writer (its own file tools and hold).
func (f *folder) agent(t *testing.T, m llm.Model, saver checkpoint.Saver, mode isolate.Mode, interruptOn map[string]hitl.InterruptOn) (*agent.Agent, *background.Middleware) {
	t.Helper()
	as, err := background.New(background.Config{
		Parent: subagents.Parent{
			Agent:      agent.Config{Model: m, Checkpointer: saver, Tools: []tool.Tool{f.hold()}},
			Middleware: func() []agent.Middleware { return []agent.Middleware{f.files} },
		},
		Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "writer", Description: "writes", SystemPrompt: "You write.",
			Isolation: mode, InterruptOn: interruptOn}}},
		Options:          f.options(),
		Workspace:        f.dir,
		WorkspaceOptions: isolate.Options{TempDir: f.tmp, MaxFiles: f.maxFiles},
	})
	if err != nil {
		t.Fatal(err)
	}
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver, Middleware: []agent.Middleware{f.files, as}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, as
}

func (f *folder) options() background.Options {
	o := f.opts
	o.NewTaskID = func() string { return "task-1" }
	return o
}

// scripted answers the subagent writer with its steps, one per model
// call (counted by the assistant messages it has).
func scripted(m *stepModel, steps ...llm.Message) {
	if m.subs == nil {
		m.subs = map[string]func(context.Context, *llm.Request) (llm.Message, error){}
	}
	m.subs["writer"] = func(_ context.Context, req *llm.Request) (llm.Message, error) {
		n := 0
		for _, msg := range req.Messages {
			if msg.Role == llm.RoleAssistant {
				n++
			}
		}
		if n >= len(steps) {
			return llm.AssistantText("writer: nothing more scripted"), nil
		}
		return steps[n], nil
	}
}

func edit(path, old, new string) []any {
	return []any{filesystem.EditFileTool, map[string]string{"file_path": path, "old_string": old, "new_string": new}}
}

func writeFile(path, content string) []any {
	return []any{filesystem.WriteFileTool, map[string]string{"file_path": path, "content": content}}
}

func callsOf(cs ...[]any) llm.Message {
	var args []any
	for _, c := range cs {
		args = append(args, c...)
	}
	return calls(args...)
}

func run(t *testing.T, a *agent.Agent, prompt string) {
	t.Helper()
	res, err := a.Invoke(context.Background(), agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText(prompt)}})
	if err != nil || res.Status != agent.StatusCompleted {
		t.Fatalf("run %q: %v %+v", prompt, err, res)
	}
}

// A background task and the main agent edit the folder at once, with git
// and without: the task works in a workspace of its own (the folder
// does not see its writes while it runs), and when it ends its changes
// are merged back before its result is reported: files each made are
// both kept, different hunks of one file both merged, the hunk both
// changed a conflict that keeps both versions, which the result the
// model reads names with its hunks. The repository's HEAD and its
// worktrees are as they were, and no workspace is left.
func TestAsyncTaskWorkspace(t *testing.T) {
	for _, withGit := range []bool{false, true} {
		t.Run(map[bool]string{false: "copy", true: "git"}[withGit], func(t *testing.T) {
			f := newFolder(t, withGit, map[string]string{
				"same.txt":  "one\ntwo\nthree\nfour\nfive\nsix\nseven\n",
				"clash.txt": "a\nb\nc\n",
			})
			head := ""
			if withGit {
				head = f.git(t, "rev-parse", "HEAD")
			}
			m := &stepModel{}
			scripted(m,
				callsOf(writeFile("/sub.txt", "sub\n"), edit("/same.txt", "six\n", "SIX by writer\n"), edit("/clash.txt", "b\n", "writer's b\n")),
				calls("hold", map[string]any{}),
				llm.AssistantText("writer done"),
			)
			a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
			var r taskReport
			var mainEdits []string
			m.add(
				step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
				func(*llm.Request) llm.Message {
					received(t, f.holding, "the writer to hold")
					// It wrote in its workspace: not here.
					if _, ok := f.read(t, "sub.txt"); ok {
						t.Error("the task's file is in the folder while it runs")
					}
					if s, _ := f.read(t, "clash.txt"); s != "a\nb\nc\n" {
						t.Errorf("clash.txt while the task runs = %q", s)
					}
					return callsOf(writeFile("/main.txt", "main\n"), edit("/same.txt", "two\n", "TWO by main\n"), edit("/clash.txt", "b\n", "main's b\n"))
				},
				func(req *llm.Request) llm.Message {
					mainEdits = toolResults(req)
					close(f.release)
					return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})
				},
				func(req *llm.Request) llm.Message {
					r = parseReport(t, toolResults(req)[0])
					return llm.AssistantText("done")
				},
			)
			run(t, a, "go")
			for _, res := range mainEdits {
				if strings.Contains(res, "Error") {
					t.Errorf("main agent's edit: %s", res)
				}
			}
			if r.Status != background.Success || !strings.HasPrefix(r.Result, "writer done") {
				t.Fatalf("report = %+v", r)
			}
			for _, want := range []string{"The task worked in a workspace of its own", "Applied: /sub.txt", "Merged with changes the folder had since: /same.txt",
				"CONFLICT in /clash.txt", "the folder's:\n    main's b", "the subagent's:\n    writer's b"} {
				if !strings.Contains(r.Result, want) {
					t.Errorf("result lacks %q:\n%s", want, r.Result)
				}
			}
			for p, want := range map[string]string{"main.txt": "main\n", "sub.txt": "sub\n", "same.txt": "one\nTWO by main\nthree\nfour\nfive\nSIX by writer\nseven\n"} {
				if got, _ := f.read(t, p); got != want {
					t.Errorf("%s = %q, want %q", p, got, want)
				}
			}
			clash, _ := f.read(t, "clash.txt")
			for _, want := range []string{"<<<<<<<", "main's b\n", "=======\n", "writer's b\n", ">>>>>>> writer-task-1"} {
				if !strings.Contains(clash, want) {
					t.Errorf("clash.txt lacks %q:\n%s", want, clash)
				}
			}
			if left := f.workspaces(t); len(left) != 0 {
				t.Errorf("workspaces left: %v", left)
			}
			if withGit {
				if now := f.git(t, "rev-parse", "HEAD"); now != head {
					t.Errorf("HEAD moved: %s -> %s", head, now)
				}
				if wts := f.git(t, "worktree", "list"); strings.Count(wts, "\n") != 0 {
					t.Errorf("worktrees left:\n%s", wts)
				}
			}
		})
	}
}

// isolation: none shares the folder, as before workspaces: the task's
// writes are there while it runs, and its result has no merge report.
func TestAsyncTaskSharesTheFolder(t *testing.T) {
	f := newFolder(t, false, nil)
	m := &stepModel{}
	scripted(m, callsOf(writeFile("/sub.txt", "sub\n")), calls("hold", map[string]any{}), llm.AssistantText("writer done"))
	a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), isolate.None, nil)
	var r taskReport
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		func(*llm.Request) llm.Message {
			received(t, f.holding, "the writer to hold")
			if s, ok := f.read(t, "sub.txt"); !ok || s != "sub\n" {
				t.Errorf("sub.txt while the task runs = %q, %v", s, ok)
			}
			close(f.release)
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})
		},
		func(req *llm.Request) llm.Message {
			r = parseReport(t, toolResults(req)[0])
			return llm.AssistantText("done")
		},
	)
	run(t, a, "go")
	if r.Status != background.Success || r.Result != "writer done" {
		t.Errorf("report = %+v", r)
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces made: %v", left)
	}
}

// A cancelled task merges back what it wrote, as a task that ended: the
// cancel's result says so, the stream of the run that started it tells
// the person (a workspace_merge notice), and the file is in the folder.
func TestAsyncTaskCancelledMerges(t *testing.T) {
	f := newFolder(t, false, nil)
	m := &stepModel{}
	scripted(m, callsOf(writeFile("/sub.txt", "sub\n")), calls("hold", map[string]any{}))
	a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
	var cancelled string
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		func(*llm.Request) llm.Message {
			received(t, f.holding, "the writer to hold")
			if _, ok := f.read(t, "sub.txt"); ok {
				t.Error("the task's file is in the folder while it runs")
			}
			return calls(background.CancelAsyncTaskTool, map[string]any{"task_id": "task-1"})
		},
		func(req *llm.Request) llm.Message {
			cancelled = toolResults(req)[0]
			return llm.AssistantText("done")
		},
	)
	var notices []agent.Event
	for e, err := range a.Stream(context.Background(), agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("go")}}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.Type == agent.EventNotice && e.Name == subagents.NoticeMerge {
			notices = append(notices, e)
		}
	}
	if len(notices) != 1 || len(notices[0].Files) != 1 || notices[0].Files[0] != "/sub.txt" || !strings.Contains(notices[0].Content, "1 file(s) merged back") {
		t.Errorf("notices = %+v", notices)
	}
	if !strings.HasPrefix(cancelled, "Cancelled async subagent task: task-1") || !strings.Contains(cancelled, "Applied: /sub.txt") {
		t.Errorf("cancel = %q", cancelled)
	}
	if s, ok := f.read(t, "sub.txt"); !ok || s != "sub\n" {
		t.Errorf("sub.txt = %q, %v", s, ok)
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// A task that parks for approval keeps its workspace while it waits
// (nothing of it reaches the folder), and goes on in it once answered:
// what it wrote before and after the park is merged back when it ends.
func TestAsyncTaskWorkspaceAcrossAPark(t *testing.T) {
	f := newFolder(t, true, map[string]string{"same.txt": "one\ntwo\n"})
	m := &stepModel{}
	scripted(m, callsOf(edit("/same.txt", "two\n", "TWO by writer\n")), callsOf(writeFile("/sub.txt", "sub\n")), llm.AssistantText("writer done"))
	a, as := f.agent(t, m, checkpoint.NewMemorySaver(), "", map[string]hitl.InterruptOn{filesystem.WriteFileTool: {}})
	heard := make(chan background.Approval, 4)
	defer as.Watch(func(ap background.Approval) { heard <- ap })()
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		step(llm.AssistantText("started")),
	)
	run(t, a, "go")
	received(t, heard, "the park")
	if s, _ := f.read(t, "same.txt"); s != "one\ntwo\n" {
		t.Errorf("same.txt while the task waits = %q", s)
	}
	if left := f.workspaces(t); len(left) != 1 {
		t.Errorf("workspaces while the task waits: %v", left)
	}
	if err := as.Answer(context.Background(), "t1", "task-1", []agent.Decision{{Type: agent.DecisionApprove}}); err != nil {
		t.Fatal(err)
	}
	r, _ := collect(t, a, m, background.WaitAsyncTaskTool)
	if r.Status != background.Success || !strings.HasPrefix(r.Result, "writer done") || !strings.Contains(r.Result, "Applied: /same.txt, /sub.txt") {
		t.Errorf("report = %+v", r)
	}
	if s, _ := f.read(t, "same.txt"); s != "one\nTWO by writer\n" {
		t.Errorf("same.txt = %q", s)
	}
	if s, _ := f.read(t, "sub.txt"); s != "sub\n" {
		t.Errorf("sub.txt = %q", s)
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// A task found again after its process ended without a word, parked in
// a workspace: its answer resumes it in a fresh workspace, and its
// result says clearly that what it wrote before is not merged and where
// it is; nothing of it reaches the folder silently.
func TestAsyncTaskWorkspaceAfterARestart(t *testing.T) {
	f := newFolder(t, false, map[string]string{"same.txt": "one\ntwo\n"})
	path := filepath.Join(t.TempDir(), "threads.db")
	ctx := context.Background()
	db, err := sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []llm.Message{callsOf(edit("/same.txt", "two\n", "TWO by writer\n")), callsOf(writeFile("/sub.txt", "sub\n")), llm.AssistantText("writer done")}
	m := &stepModel{}
	scripted(m, steps...)
	ask := map[string]hitl.InterruptOn{filesystem.WriteFileTool: {}}
	a, as := f.agent(t, m, db.Saver(), "", ask)
	heard := make(chan background.Approval, 4)
	as.Watch(func(ap background.Approval) { heard <- ap })
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		step(llm.AssistantText("started")),
	)
	run(t, a, "go")
	received(t, heard, "the park")
	old := f.workspaces(t)
	if len(old) != 1 {
		t.Fatalf("workspaces while the task waits: %v", old)
	}
	db.Close() // the process ends without a word

	db, err = sqlite.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	m2 := &stepModel{}
	scripted(m2, steps...)
	a2, as2 := f.agent(t, m2, db.Saver(), "", ask)
	if err := as2.Answer(ctx, "t1", "task-1", []agent.Decision{{Type: agent.DecisionApprove}}); err != nil {
		t.Fatal(err)
	}
	r, _ := collect(t, a2, m2, background.WaitAsyncTaskTool)
	if r.Status != background.Success || !strings.HasPrefix(r.Result, "writer done") {
		t.Fatalf("report = %+v", r)
	}
	for _, want := range []string{"nothing of it was merged into the folder", filepath.Join(f.tmp, old[0]), "Applied: /sub.txt"} {
		if !strings.Contains(r.Result, want) {
			t.Errorf("result lacks %q:\n%s", want, r.Result)
		}
	}
	if s, _ := f.read(t, "same.txt"); s != "one\ntwo\n" {
		t.Errorf("same.txt = %q: the lost workspace's edit was merged", s)
	}
	if s, _ := f.read(t, "sub.txt"); s != "sub\n" {
		t.Errorf("sub.txt = %q", s)
	}
	if left := f.workspaces(t); len(left) != 1 || left[0] != old[0] {
		t.Errorf("workspaces left: %v (the lost one, %v, is kept)", left, old)
	}
}

// An update goes on in the workspace the task worked in: what it wrote
// before the update and after it is merged back once, when it ends.
func TestAsyncTaskUpdateKeepsItsWorkspace(t *testing.T) {
	f := newFolder(t, false, nil)
	m := &stepModel{subs: map[string]func(context.Context, *llm.Request) (llm.Message, error){
		"writer": func(_ context.Context, req *llm.Request) (llm.Message, error) {
			last, n := "", 0
			for _, msg := range req.Messages {
				switch msg.Role {
				case llm.RoleUser:
					last, n = msg.Text(), 0
				case llm.RoleAssistant:
					n++
				}
			}
			switch {
			case last == "write" && n == 0:
				return callsOf(writeFile("/sub.txt", "sub\n")), nil
			case last == "write":
				return calls("hold", map[string]any{}), nil
			case n == 0:
				return callsOf(writeFile("/more.txt", "more\n")), nil
			}
			return llm.AssistantText("writer done"), nil
		},
	}}
	a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
	var updated string
	var r taskReport
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		func(*llm.Request) llm.Message {
			received(t, f.holding, "the writer to hold")
			return calls(background.UpdateAsyncTaskTool, map[string]any{"task_id": "task-1", "message": "also write more"})
		},
		func(req *llm.Request) llm.Message {
			updated = toolResults(req)[0]
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})
		},
		func(req *llm.Request) llm.Message {
			r = parseReport(t, toolResults(req)[0])
			return llm.AssistantText("done")
		},
	)
	run(t, a, "go")
	if updated != "Updated async subagent. task_id: task-1" {
		t.Errorf("update = %q", updated)
	}
	if r.Status != background.Success || !strings.HasPrefix(r.Result, "writer done") || !strings.Contains(r.Result, "Applied: /more.txt, /sub.txt") {
		t.Errorf("report = %+v", r)
	}
	for p, want := range map[string]string{"sub.txt": "sub\n", "more.txt": "more\n"} {
		if got, _ := f.read(t, p); got != want {
			t.Errorf("%s = %q, want %q", p, got, want)
		}
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// A parked task nobody answers is denied: it has ended, so what it wrote
// before it parked is merged back, and its error says so.
func TestAsyncTaskDeniedMerges(t *testing.T) {
	f := newFolder(t, false, map[string]string{"same.txt": "one\ntwo\n"})
	f.opts.ApprovalWait = 1
	m := &stepModel{}
	scripted(m, callsOf(edit("/same.txt", "two\n", "TWO by writer\n")), callsOf(writeFile("/sub.txt", "sub\n")))
	a, as := f.agent(t, m, checkpoint.NewMemorySaver(), "", map[string]hitl.InterruptOn{filesystem.WriteFileTool: {}})
	heard := make(chan background.Approval, 4)
	defer as.Watch(func(ap background.Approval) { heard <- ap })()
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		step(llm.AssistantText("started")),
	)
	run(t, a, "go")
	received(t, heard, "the park")
	if ap := received(t, heard, "the denial"); ap.Status != background.Denied {
		t.Fatalf("heard %+v", ap)
	}
	r, _ := collect(t, a, m, background.CheckAsyncTaskTool)
	if r.Status != background.Denied || !strings.Contains(r.Error, "nobody answered") || !strings.Contains(r.Error, "Applied: /same.txt") {
		t.Errorf("report = %+v", r)
	}
	if s, _ := f.read(t, "same.txt"); s != "one\nTWO by writer\n" {
		t.Errorf("same.txt = %q", s)
	}
	if _, ok := f.read(t, "sub.txt"); ok {
		t.Error("the denied write was made")
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// A running task whose process is gone (another instance continues the
// thread) is lost, and its error says that what it wrote in its
// workspace was not merged, and where it is.
func TestAsyncTaskLostSaysWhereItsWorkspaceIs(t *testing.T) {
	f := newFolder(t, false, nil)
	saver := checkpoint.NewMemorySaver()
	m1 := &stepModel{}
	scripted(m1, callsOf(writeFile("/sub.txt", "sub\n")), calls("hold", map[string]any{}), llm.AssistantText("writer done"))
	a1, _ := f.agent(t, m1, saver, "", nil)
	m1.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		step(llm.AssistantText("started")),
	)
	run(t, a1, "go")
	received(t, f.holding, "the writer to hold")
	left := f.workspaces(t)
	if len(left) != 1 {
		t.Fatalf("workspaces while the task runs: %v", left)
	}
	m2 := &stepModel{}
	a2, _ := f.agent(t, m2, saver, "", nil)
	r, _ := collect(t, a2, m2, background.CheckAsyncTaskTool)
	if r.Status != background.Lost || !strings.Contains(r.Error, "nothing of it was merged into the folder") || !strings.Contains(r.Error, filepath.Join(f.tmp, left[0])) {
		t.Errorf("report = %+v", r)
	}
	if _, ok := f.read(t, "sub.txt"); ok {
		t.Error("the lost task's file is in the folder")
	}
	close(f.release) // the first instance's task ends, and merges there
	a1.Close()
}

// Two updates of a finished task in one turn (the calls run in
// parallel): one goes on (or both, one after the other), and one that is
// refused neither removes the workspace the run that went on works in
// nor leaves one of its own behind, nor does a run go on without one. What the update wrote is merged back, and no
// workspace is left.
func TestAsyncTaskTwoUpdatesAtOnceKeepOneWorkspace(t *testing.T) {
	for i := range 5 { // the calls race: several rounds
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			f := newFolder(t, false, map[string]string{"base.txt": "base\n"})
			m := &stepModel{subs: map[string]func(context.Context, *llm.Request) (llm.Message, error){
				"writer": func(_ context.Context, req *llm.Request) (llm.Message, error) {
					last, n := "", 0
					for _, msg := range req.Messages {
						switch msg.Role {
						case llm.RoleUser:
							last, n = msg.Text(), 0
						case llm.RoleAssistant:
							n++
						}
					}
					switch {
					case last == "write" && n == 0:
						return callsOf(writeFile("/sub.txt", "sub\n")), nil
					case last != "write" && n == 0:
						return callsOf(writeFile("/more.txt", "more\n")), nil
					}
					return llm.AssistantText("writer done"), nil
				},
			}}
			a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
			var updates []string
			var r taskReport
			m.add(
				step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
				step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})),
				step(calls(background.UpdateAsyncTaskTool, map[string]any{"task_id": "task-1", "message": "more"},
					background.UpdateAsyncTaskTool, map[string]any{"task_id": "task-1", "message": "more"})),
				func(req *llm.Request) llm.Message {
					updates = toolResults(req)
					return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})
				},
				func(req *llm.Request) llm.Message {
					r = parseReport(t, toolResults(req)[0])
					return llm.AssistantText("done")
				},
			)
			run(t, a, "go")
			ok := 0
			for _, u := range updates {
				if strings.HasPrefix(u, "Updated async subagent.") {
					ok++
				}
			}
			if ok == 0 {
				t.Errorf("updates = %q, want one to go on", updates)
			}
			// Two updates may also go on one after the other.
			if r.Status != background.Success || !strings.Contains(r.Result, "The task worked in a workspace of its own") {
				t.Errorf("report = %+v", r)
			}
			if got, _ := f.read(t, "more.txt"); got != "more\n" {
				t.Errorf("more.txt = %q", got)
			}
			if left := f.workspaces(t); len(left) != 0 {
				t.Errorf("workspaces left: %v", left)
			}
		})
	}
}

// An update that gives up waiting for the task to stop (its call is
// cancelled) takes nothing over: the run, once it ends, merges its
// workspace back itself, and none is left behind.
func TestAsyncTaskUpdateGivenUpMerges(t *testing.T) {
	f := newFolder(t, false, nil)
	f.told = make(chan struct{}, 1)
	m := &stepModel{}
	scripted(m,
		callsOf(writeFile("/sub.txt", "sub\n")),
		calls("hold", map[string]any{}),
		llm.AssistantText("writer done"),
	)
	a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		func(*llm.Request) llm.Message {
			received(t, f.holding, "the writer to hold")
			go func() {
				<-f.told // the update told it to stop: the caller gives up
				cancel()
			}()
			return calls(background.UpdateAsyncTaskTool, map[string]any{"task_id": "task-1", "message": "also write more"})
		},
		step(llm.AssistantText("done")),
	)
	_, _ = a.Invoke(ctx, agent.Input{ThreadID: "t1", Messages: []llm.Message{llm.UserText("go")}})
	close(f.release)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := f.read(t, "sub.txt"); got != "sub\n" {
		t.Errorf("sub.txt = %q, want what the task wrote merged back", got)
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// A background task's commands (execute) run in its workspace too: what
// a command writes is not in the folder while the task runs, and is
// merged back when it ends.
func TestAsyncTaskCommandsRunInItsWorkspace(t *testing.T) {
	f := newFolder(t, false, map[string]string{"base.txt": "base\n"})
	sh, err := sandbox.NewLocalShell(f.dir, sandbox.LocalShellOptions{Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if f.files, err = filesystem.New(filesystem.Config{Backend: sh}); err != nil {
		t.Fatal(err)
	}
	m := &stepModel{}
	scripted(m,
		calls(filesystem.ExecuteTool, map[string]any{"command": "echo made > made.txt; rm base.txt"}),
		calls("hold", map[string]any{}),
		llm.AssistantText("writer done"),
	)
	a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
	var r taskReport
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		func(*llm.Request) llm.Message {
			received(t, f.holding, "the writer to hold")
			if _, ok := f.read(t, "made.txt"); ok {
				t.Error("the task's command wrote the folder while it runs")
			}
			if _, ok := f.read(t, "base.txt"); !ok {
				t.Error("the task's command removed a file of the folder while it runs")
			}
			close(f.release)
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})
		},
		func(req *llm.Request) llm.Message {
			r = parseReport(t, toolResults(req)[0])
			return llm.AssistantText("done")
		},
	)
	run(t, a, "go")
	if r.Status != background.Success || !strings.Contains(r.Result, "Applied: /made.txt") || !strings.Contains(r.Result, "Removed: /base.txt") {
		t.Errorf("report = %+v", r)
	}
	if got, _ := f.read(t, "made.txt"); got != "made\n" {
		t.Errorf("made.txt = %q", got)
	}
	if _, ok := f.read(t, "base.txt"); ok {
		t.Error("base.txt, which the task removed, is still there")
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}

// A folder too large to copy (no git) leaves the task in the shared
// folder: it starts, its writes are there, and its result says why, with
// the bound it met. No workspace is made.
func TestAsyncTaskFolderTooLargeToCopy(t *testing.T) {
	f := newFolder(t, false, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	f.maxFiles = 2
	m := &stepModel{}
	scripted(m, callsOf(writeFile("/sub.txt", "sub\n")), llm.AssistantText("writer done"))
	a, _ := f.agent(t, m, checkpoint.NewMemorySaver(), "", nil)
	var r taskReport
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "writer", "description": "write"})),
		step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": "task-1", "timeout": 30})),
		func(req *llm.Request) llm.Message {
			r = parseReport(t, toolResults(req)[0])
			return llm.AssistantText("done")
		},
	)
	run(t, a, "go")
	for _, want := range []string{"writer done", "The task worked in the shared folder", "too large to copy", "more than 2 files"} {
		if !strings.Contains(r.Result, want) {
			t.Errorf("result lacks %q: %+v", want, r)
		}
	}
	if got, _ := f.read(t, "sub.txt"); got != "sub\n" {
		t.Errorf("sub.txt = %q", got)
	}
	if left := f.workspaces(t); len(left) != 0 {
		t.Errorf("workspaces left: %v", left)
	}
}
