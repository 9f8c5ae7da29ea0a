package backend_test

import (
	"context"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/thread"
)

func TestUnderConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		return backend.Under("/mnt/inner", backend.NewStateBackend(thread.NewFiles(nil)))
	})
}

func TestUnderKeepsFullPathsBehindComposite(t *testing.T) {
	files := thread.NewFiles(nil)
	state := backend.NewStateBackend(files)
	c, err := backend.NewComposite(backend.NewStateBackend(thread.NewFiles(nil)), map[string]backend.Backend{
		"/large_tool_results/":   backend.Under("/large_tool_results", state),
		"/conversation_history/": backend.Under("/conversation_history", state),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Write(ctx, "/large_tool_results/x", "big"); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(ctx, "/conversation_history/x", "history"); err != nil {
		t.Fatalf("the two routes collide: %v", err)
	}
	if got := files.Paths(); len(got) != 2 || got[0] != "/conversation_history/x" || got[1] != "/large_tool_results/x" {
		t.Errorf("state files = %v", got)
	}
	infos, err := c.List(ctx, "/large_tool_results")
	if err != nil || len(infos) != 1 || infos[0].Path != "/large_tool_results/x" {
		t.Errorf("list = %+v, %v", infos, err)
	}
	ms, err := c.Grep(ctx, backend.GrepQuery{Pattern: "hist", Path: "/"})
	if err != nil || len(ms) != 1 || ms[0].Path != "/conversation_history/x" {
		t.Errorf("grep = %+v, %v", ms, err)
	}
}
