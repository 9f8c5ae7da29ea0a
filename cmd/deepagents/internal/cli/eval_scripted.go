package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/agent"
)

// A scripted eval: --model replay:DIR, DIR a folder, plays DIR/TASK.json
// (the scripted model's format, llm/replay) as the model of every trial
// of task TASK. The harness then runs end to end (prompt, tools, sandbox,
// verifier) with no model and no network: eval/scripted holds a script
// that solves each task of eval/dataset, and CI scores them
// (docs/eval.md). A task without a script fails its trials (the session
// cannot open its model); a file is a single script, for every task, as
// in run.

// scriptFolder returns DIR when model is replay:DIR and DIR is a folder.
func scriptFolder(model string) (string, bool) {
	dir, ok := strings.CutPrefix(model, "replay:")
	if !ok {
		return "", false
	}
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// scriptedModel is the model of a trial of task: DIR/TASK.json when
// model names a folder of scripts, model itself otherwise.
func scriptedModel(model, task string) string {
	if dir, ok := scriptFolder(model); ok {
		return "replay:" + filepath.Join(dir, task+".json")
	}
	return model
}

// checkModel is the model eval's check opens a session with: for a folder
// of scripts, one of them (the first by name), as each trial's is one.
func checkModel(model string) (string, error) {
	dir, ok := scriptFolder(model)
	if !ok {
		return model, nil
	}
	scripts, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(scripts) == 0 {
		return "", usageError{fmt.Errorf("--model replay:%s: the folder holds no script (TASK.json, a task's)", dir)}
	}
	return "replay:" + scripts[0], nil
}

// brokenTools, for the CLI's tests only (never a flag), names tools that
// answer every call of the harness's eval trials with an error, without
// running: an eval that must score lower on the tasks that need them.
var brokenTools []string

// evalMiddleware is the middleware of the harness's trials: a broken tool
// for each of brokenTools, none in the product.
func evalMiddleware() []deepagents.Middleware {
	if len(brokenTools) == 0 {
		return nil
	}
	return []deepagents.Middleware{breakTools(brokenTools)}
}

// breakTools is a middleware under which the tools named answer an error.
type breakTools []string

func (breakTools) Name() string { return "eval_broken_tools" }

// WrapTool implements agent.ToolWrapper.
func (b breakTools) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	for _, name := range b {
		if req.Call.Name == name {
			return agent.ToolResult{Content: "Error: " + name + " is broken (a test of the eval)", IsError: true}, nil
		}
	}
	return next(ctx, req)
}
