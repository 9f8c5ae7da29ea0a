package deepagents_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/sqlite"
)

// Subagent modes: an isolated subagent (the default) starts from the task
// description alone; a forked one starts from a copy of the conversation
// so far, then the task. Here only the forked one knows the deadline the
// user gave earlier (the scripted model checks what each request holds).
func ExampleNew_subagentModes() {
	model := replay.New(
		replay.Turn{Content: "Noted."},
		replay.Turn{ToolCalls: []llm.ToolCall{
			call("f", "task", `{"description":"Draft the announcement.","subagent_type":"drafter"}`),
			call("i", "task", `{"description":"Proofread: 'Its ready.'","subagent_type":"proofreader"}`),
		}},
		replay.Turn{Agent: "drafter", Content: "Launch on Friday.",
			Expect: &replay.Expect{MessagesContain: []string{"launch is on Friday"}}},
		replay.Turn{Agent: "proofreader", Content: "It's ready.",
			Expect: &replay.Expect{MessagesExclude: []string{"Friday"}}},
		replay.Turn{Content: "Both done."},
	)
	a, err := deepagents.New(deepagents.Config{
		Model: model,
		Subagents: []deepagents.Subagent{
			{Name: "drafter", Description: "Drafts texts from what we discussed.", SystemPrompt: "You draft texts.", Mode: deepagents.SubagentFork},
			{Name: "proofreader", Description: "Fixes grammar.", SystemPrompt: "You fix grammar."}, // isolated
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := a.Invoke(ctx, deepagents.Prompt("The launch is on Friday."))
	if err != nil {
		log.Fatal(err)
	}
	res, err = a.Invoke(ctx, deepagents.Input{State: res.State, Messages: []llm.Message{llm.UserText("Draft it, and proofread the tagline.")}})
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleTool {
			fmt.Printf("%s: %s\n", m.ToolCallID, m.Text())
		}
	}
	// Output:
	// f: Launch on Friday.
	// i: It's ready.
}

// Approvals inside a subagent: the subagent's gated call stops the whole
// run; the request's Namespace says which subagent asks. The thread is on
// SQLite, so another process (here: a new database handle and agent) can
// resume it: the decision goes to the subagent, which goes on.
func ExampleNew_subagentApproval() {
	dir, _ := os.MkdirTemp("", "subagent-approval")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "threads.db")
	ctx := context.Background()
	open := func(model llm.Model) (*deepagents.Agent, *sqlite.DB) {
		db, err := sqlite.Open(ctx, path, nil)
		if err != nil {
			log.Fatal(err)
		}
		a, err := deepagents.New(deepagents.Config{
			Model:        model,
			Checkpointer: db.Saver(),
			Subagents: []deepagents.Subagent{{
				Name: "writer", Description: "Writes files.",
				InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
			}},
		})
		if err != nil {
			log.Fatal(err)
		}
		return a, db
	}

	// The first process stops, waiting for a decision.
	a, db := open(replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{call("t1", "task", `{"description":"Write /notes.txt","subagent_type":"writer"}`)}},
		replay.Turn{Agent: "writer", ToolCalls: []llm.ToolCall{call("w", "write_file", `{"file_path":"/notes.txt","content":"hello"}`)}},
	))
	in := deepagents.Prompt("Take notes.")
	in.ThreadID = "thread-1"
	res, err := a.Invoke(ctx, in)
	if err != nil {
		log.Fatal(err)
	}
	req := res.Interrupts[0]
	fmt.Println(res.Status, req.Tool, strings.Join(req.Namespace, "/"))
	db.Close()

	// Another process resumes it.
	a, db = open(replay.New(
		replay.Turn{Agent: "writer", Content: "Wrote /notes.txt."},
		replay.Turn{Content: "Notes taken."},
	))
	defer db.Close()
	res, err = a.Resume(ctx, "thread-1", []deepagents.Decision{{Type: deepagents.DecisionApprove}})
	if err != nil {
		log.Fatal(err)
	}
	notes, _ := res.State.Files.Get("/notes.txt")
	fmt.Println(res.Status, res.Text(), notes.Content)
	// Output:
	// interrupted write_file writer:t1
	// completed Notes taken. hello
}

// Failure isolation: parallel task calls are independent. One subagent
// fails (here its model call errors); the others finish, and the main
// agent sees every outcome as a tool result, the failure as an error.
func ExampleNew_subagentFailure() {
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			call("a", "task", `{"description":"Count to three.","subagent_type":"counter"}`),
			call("b", "task", `{"description":"Say hello.","subagent_type":"greeter"}`),
		}},
		replay.Turn{Agent: "counter", Error: "provider unavailable"},
		replay.Turn{Agent: "greeter", Content: "Hello."},
		replay.Turn{Content: "One of two worked."},
	)
	a, err := deepagents.New(deepagents.Config{
		Model: model,
		Subagents: []deepagents.Subagent{
			{Name: "counter", Description: "Counts."},
			{Name: "greeter", Description: "Greets."},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Count and greet."))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleTool {
			fmt.Printf("%s (error %v): %s\n", m.ToolCallID, m.IsError, m.Text())
		}
	}
	fmt.Println(res.Text())
	// Output:
	// a (error true): Error: subagent counter failed: agent: model call 1: replay: turn 2: provider unavailable
	// b (error false): Hello.
	// One of two worked.
}
