package deepagents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/hooks"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
)

// Hooks in Go: a PreToolUse hook refuses writes to .env files (the model
// reads its reason), and a Stop hook sends the agent back once to check
// its work. A command hook in Claude Code's format is a hooks.Hook with
// Command set instead of Func (see docs/hooks.md).
func ExampleNew_hooks() {
	guard := hooks.Hook{Event: hooks.PreToolUse, Matcher: "write_file|edit_file", Func: func(_ context.Context, in *hooks.Input) (*hooks.Output, error) {
		var args struct {
			FilePath string `json:"file_path"`
		}
		json.Unmarshal(in.ToolInput, &args) //nolint:errcheck // no path: nothing to guard
		if strings.HasSuffix(args.FilePath, ".env") {
			return hooks.Deny("secrets stay out of .env files the agent writes"), nil
		}
		return nil, nil
	}}
	review := hooks.Hook{Event: hooks.Stop, Func: func(_ context.Context, in *hooks.Input) (*hooks.Output, error) {
		if *in.StopHookActive {
			return nil, nil // sent back once already: let it end
		}
		return hooks.Block("Read /config.txt back before you finish."), nil
	}}
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			call("w1", "write_file", `{"file_path":"/.env","content":"TOKEN=abc"}`),
			call("w2", "write_file", `{"file_path":"/config.txt","content":"token: from the vault"}`),
		}},
		replay.Turn{Content: "Done."},
		replay.Turn{ToolCalls: []llm.ToolCall{call("r1", "read_file", `{"file_path":"/config.txt"}`)}},
		replay.Turn{Content: "Checked: /config.txt reads the token from the vault."},
	)
	a, err := deepagents.New(deepagents.Config{Model: model, Hooks: hooks.Config{Hooks: []hooks.Hook{guard, review}}})
	if err != nil {
		log.Fatal(err)
	}
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Store the token."))
	if err != nil {
		log.Fatal(err)
	}
	for _, m := range res.State.Messages {
		if m.Role == llm.RoleTool && m.ToolCallID != "r1" {
			fmt.Printf("%s: %s\n", m.ToolCallID, m.Text())
		}
	}
	fmt.Println(res.Text())
	// Output:
	// w1: Error: a PreToolUse hook refused this call: secrets stay out of .env files the agent writes
	// w2: Updated file /config.txt
	// Checked: /config.txt reads the token from the vault.
}
