package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/anthropic/anthropictest"
	"github.com/deepagents-go/deepagents/llm/openai"
	"github.com/deepagents-go/deepagents/llm/openai/openaitest"
	"github.com/deepagents-go/deepagents/middleware/verify"
)

// standIn is a provider's wire stand-in playing the script, and the real
// provider client pointed at it.
type standIn struct {
	model llm.Model
	// url is the stand-in's base URL, for clients of other harnesses.
	url    string
	bodies func() [][]byte // the model requests' bodies, in order
	left   func() int      // scripted turns not played
	close  func()
}

// startAnthropic serves the script over the Messages API and returns the
// anthropic provider (the official SDK) pointed at it.
func startAnthropic(model string, steps []step) (*standIn, error) {
	turns := make([]anthropictest.Turn, len(steps))
	for i, s := range steps {
		turns[i].Text = s.Text
		for _, c := range s.Calls {
			turns[i].ToolCalls = append(turns[i].ToolCalls, anthropictest.ToolCall{Name: c.Name, Input: c.Args})
		}
	}
	srv := anthropictest.NewServer(turns...)
	m, err := anthropic.New(model, anthropic.Options{APIKey: "bench", BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("anthropic model: %w", err)
	}
	return &standIn{model: m, url: srv.URL, bodies: srv.MessageRequests, left: srv.Remaining, close: srv.Close}, nil
}

// startOpenAI serves the script over the Chat Completions API and returns
// the openai provider (the official SDK) pointed at it.
func startOpenAI(model string, steps []step) (*standIn, error) {
	turns := make([]openaitest.Turn, len(steps))
	for i, s := range steps {
		turns[i].Text = s.Text
		for _, c := range s.Calls {
			turns[i].ToolCalls = append(turns[i].ToolCalls, openaitest.ToolCall{Name: c.Name, Arguments: c.Args})
		}
	}
	srv := openaitest.NewServer(turns...)
	m, err := openai.New(model, openai.Options{APIKey: "bench", BaseURL: srv.URL, MaxRetries: -1})
	if err != nil {
		srv.Close()
		return nil, fmt.Errorf("openai model: %w", err)
	}
	return &standIn{model: m, url: srv.URL, bodies: srv.Bodies, left: srv.Remaining, close: srv.Close}, nil
}

// runResult is what one run of the task left.
type runResult struct {
	// Bodies are the model requests' bodies, in the order sent.
	Bodies [][]byte
	// Files are the thread's files at the end, path to content.
	Files map[string]string
	// Final is the agent's final answer.
	Final string
}

// runTask runs the scripted task once through the deep agent with the
// product's defaults (deepagents.New: the default middleware stack with
// summarization and prompt caching, the general-purpose subagent, the
// State backend) and a checkpointer, the model being the real provider
// client talking to the stand-in.
func runTask(ctx context.Context, start func(steps []step) (*standIn, error)) (*runResult, error) {
	steps := script()
	si, err := start(steps)
	if err != nil {
		return nil, err
	}
	defer si.close()
	files, err := workspace()
	if err != nil {
		return nil, err
	}
	cfg := deepagents.Config{Model: si.model, Checkpointer: checkpoint.NewMemorySaver(), LocalContext: localContext}
	if verifyPass {
		cfg.Verify = &verify.Config{}
	}
	a, err := deepagents.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("deepagents.New: %w", err)
	}
	defer a.Close()
	res, err := a.Invoke(ctx, deepagents.Input{
		ThreadID: "tokens-bench",
		Messages: []llm.Message{llm.UserText(taskPrompt)},
		Files:    files,
	})
	if err != nil {
		return nil, fmt.Errorf("the run failed after %d requests: %w", len(si.bodies()), err)
	}
	if res.Status != deepagents.StatusCompleted {
		return nil, fmt.Errorf("the run ended %s", res.Status)
	}
	out := &runResult{Bodies: si.bodies(), Files: map[string]string{}, Final: res.Text()}
	for p, d := range res.State.Files.Snapshot() {
		out.Files[p] = d.Content
	}
	if bad := out.problems(si, len(steps), nil); len(bad) > 0 {
		return out, errors.New("the task did not run as scripted: " + strings.Join(bad, "; "))
	}
	return out, nil
}

// localContext and verifyPass turn on, for a measurement of their cost,
// the harness's mechanisms that are off by default (-local-context,
// -verify).
var localContext, verifyPass bool

// problems lists how a run strayed from its script of turns steps: turns
// not played, a request too many or too few, another final answer, the
// workspace without the scripted edits, and the other problems given.
func (r *runResult) problems(si *standIn, steps int, other []string) []string {
	var bad []string
	if n := si.left(); n != 0 {
		bad = append(bad, fmt.Sprintf("%d scripted turns were not played", n))
	}
	if len(r.Bodies) != steps {
		bad = append(bad, fmt.Sprintf("%d requests for %d scripted turns", len(r.Bodies), steps))
	}
	if r.Final != finalAnswer {
		bad = append(bad, "the final answer is not the scripted one")
	}
	bad = append(bad, other...)
	return append(bad, workspaceCheck(r.Files)...)
}
