//go:build unix

package backend_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/thread"
)

func ExampleNewFilesystemBackend() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	fs, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{}) // virtual mode
	if err != nil {
		panic(err)
	}
	_ = fs.Write(ctx, "/src/main.go", "package main\n\nfunc main() {}\n")
	ms, _ := fs.Grep(ctx, backend.GrepQuery{Pattern: `^func \w+`, Glob: "*.go"})
	for _, m := range ms {
		fmt.Printf("%s:%d: %s\n", m.Path, m.Line, m.Text)
	}
	_, err = fs.Read(ctx, "/../etc/passwd", 0, 10)
	fmt.Println(errors.Is(err, backend.ErrInvalidPath))
	// Output:
	// /src/main.go:3: func main() {}
	// true
}

func ExampleNewComposite() {
	ctx := context.Background()
	scratch := backend.NewStateBackend(thread.NewFiles(nil))
	memories := backend.NewStoreBackend(store.NewMemoryStore(), nil)
	b, err := backend.NewComposite(scratch, map[string]backend.Backend{"/memories/": memories})
	if err != nil {
		panic(err)
	}
	_ = b.Write(ctx, "/notes.md", "scratch")
	_ = b.Write(ctx, "/memories/user.md", "prefers Go")

	ls, _ := b.List(ctx, "/")
	for _, f := range ls {
		fmt.Println(f.Path, f.IsDir)
	}
	// The store holds the file under the path without the route's prefix.
	r, _ := memories.Read(ctx, "/user.md", 0, 0)
	fmt.Println(r.Lines)
	_, canExecute := b.(backend.Sandbox)
	fmt.Println(canExecute)
	// Output:
	// /memories true
	// /notes.md false
	// [prefers Go]
	// false
}

func ExampleNewPolicy() {
	ctx := context.Background()
	inner := backend.NewStateBackend(thread.NewFiles(nil))
	_ = inner.Write(ctx, "/config/.env", "API_KEY=...")
	p, err := backend.NewPolicy(inner,
		backend.Deny(backend.AccessRead, "**/.env"),
		backend.Allow(backend.AccessWrite, "/workspace/"),
		backend.Deny(backend.AccessWrite, "/"),
	)
	if err != nil {
		panic(err)
	}
	_, err = p.Read(ctx, "/config/.env", 0, 0)
	fmt.Println(errors.Is(err, backend.ErrPermission))
	fmt.Println(p.Write(ctx, "/workspace/plan.md", "1. ...") == nil)
	fmt.Println(errors.Is(p.Write(ctx, "/plan.md", "1. ..."), backend.ErrPermission))
	// Output:
	// true
	// true
	// true
}

func ExampleStateBackend() {
	files := thread.NewFiles(nil)
	// The agent loop puts the thread's files in the context of each tool
	// call; a StateBackend made with NewStateBackend(nil) finds them there.
	ctx := thread.WithFiles(context.Background(), files)
	s := backend.NewStateBackend(nil)
	_ = s.Write(ctx, "/todo.md", "- [ ] write tests\n")
	n, _ := s.Edit(ctx, "/todo.md", "[ ]", "[x]", false)
	d, _ := files.Get("/todo.md")
	fmt.Print(n, " ", d.Content)
	// Output:
	// 1 - [x] write tests
}

func ExampleListText() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	ctx := context.Background()
	fs, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		panic(err)
	}
	_ = fs.Write(ctx, "/docs/b.md", "b")
	_ = fs.Write(ctx, "/docs/a.md", "a")
	_ = fs.Write(ctx, "/docs/img/logo.png", "png")
	// A change made behind the backend's back is listed too.
	_ = os.WriteFile(dir+"/docs/c.md", []byte("c"), 0o644)

	text, err := backend.ListText(ctx, fs, "/docs")
	fmt.Println(text, err)
	// Output:
	// /docs/a.md
	// /docs/b.md
	// /docs/c.md
	// /docs/img/ <nil>
}
