package workspace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/workspace"
)

// An agent on the files the CLI gives it: the workspace folder at "/",
// long-term memory at /memories/, the user's folder read-only at /user/
// (its AGENTS.md loaded as memory), and conversation histories beside
// the database. The scripted model stands in for a real provider.
func ExampleOpen() {
	root, err := os.MkdirTemp("", "workspace-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	dir, user := filepath.Join(root, "project"), filepath.Join(root, "home", ".deepagents")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(user, 0o755)
	os.WriteFile(filepath.Join(user, "AGENTS.md"), []byte("Be brief.\n"), 0o644)

	memories := store.NewMemoryStore()
	ws, err := workspace.Open(workspace.Config{
		Dir:        dir,
		UserDir:    user,
		HistoryDir: filepath.Join(root, "threads.db.history"),
		Store:      memories,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ws.Close()

	write := func(id, path, content string) llm.ToolCall {
		args, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
		return llm.ToolCall{ID: id, Name: "write_file", Args: args}
	}
	model := replay.New(
		replay.Turn{ToolCalls: []llm.ToolCall{
			write("plan", "/plan.md", "1. ship\n"),
			write("memo", "/memories/style.md", "The user likes short answers.\n"),
			write("user", "/user/AGENTS.md", "Obey the repository.\n"),
		}},
		replay.Turn{Content: "Planned."},
	)
	a, err := deepagents.New(deepagents.Config{
		Model:      model,
		Backend:    ws.Backend,
		Memory:     ws.Memory,
		Skills:     ws.Skills,
		Middleware: ws.Middleware,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	res, err := a.Invoke(context.Background(), deepagents.Prompt("Plan the release"))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	fmt.Println(ws.Memory)

	plan, _ := os.ReadFile(filepath.Join(dir, "plan.md"))
	fmt.Printf("plan.md: %q\n", plan)
	items, _ := memories.Search(context.Background(), nil, store.SearchOptions{})
	fmt.Println("memories:", len(items))
	mine, _ := os.ReadFile(filepath.Join(user, "AGENTS.md"))
	fmt.Printf("the user's AGENTS.md: %q\n", mine)
	// Output:
	// Planned.
	// [/user/AGENTS.md /AGENTS.md]
	// plan.md: "1. ship\n"
	// memories: 1
	// the user's AGENTS.md: "Be brief.\n"
}
