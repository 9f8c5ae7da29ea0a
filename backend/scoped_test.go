package backend_test

import (
	"context"
	"errors"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/thread"
)

func TestScopedConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		inner := backend.NewStateBackend(thread.NewFiles(nil))
		return backend.Scoped(func(context.Context) (backend.Backend, error) { return inner, nil })
	})
}

type scopeKey struct{}

// TestScopedPicksPerCall: each call goes to the backend its context picks,
// and a refusal is the call's error.
func TestScopedPicksPerCall(t *testing.T) {
	a, b := backend.NewStateBackend(thread.NewFiles(nil)), backend.NewStateBackend(thread.NewFiles(nil))
	refused := errors.New("no scope")
	s := backend.Scoped(func(ctx context.Context) (backend.Backend, error) {
		switch ctx.Value(scopeKey{}) {
		case "a":
			return a, nil
		case "b":
			return b, nil
		}
		return nil, refused
	})
	in := func(name string) context.Context { return context.WithValue(context.Background(), scopeKey{}, name) }
	if err := s.Write(in("a"), "/f.txt", "in a"); err != nil {
		t.Fatal(err)
	}
	if ls, _ := s.List(in("b"), "/"); len(ls) != 0 {
		t.Errorf("b sees a's file: %v", ls)
	}
	if err := backend.Append(in("a"), s, "/f.txt", "\nmore"); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Read(in("a"), "/f.txt", 0, 0); err != nil || len(r.Lines) != 2 {
		t.Errorf("a's file: %+v %v", r, err)
	}
	if _, err := s.Read(context.Background(), "/f.txt", 0, 0); !errors.Is(err, refused) {
		t.Errorf("no scope: %v", err)
	}
	if got := s.Download(context.Background(), []string{"/f.txt"}); !errors.Is(got[0].Err, refused) {
		t.Errorf("no scope, download: %v", got[0].Err)
	}
}
