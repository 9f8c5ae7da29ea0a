package workspace

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
)

// TestThreadHistoryScope checks the folder a run's context selects: a
// subagent's thread (PARENT/CALL) shares its parent's, a pinned top-level
// thread wins, and no thread is refused.
func TestThreadHistoryScope(t *testing.T) {
	dir := t.TempDir()
	fs, err := backend.NewFilesystemBackend(dir, backend.FilesystemOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := newThreadHistory(dir, fs)
	at := func(id string) context.Context {
		return context.WithValue(context.Background(), historyThreadKey{}, id)
	}
	if err := h.Append(at("A"), "/A.md", "parent\n"); err != nil {
		t.Fatal(err)
	}
	if err := h.Append(at("A/call1"), "/A_call1.md", "child\n"); err != nil {
		t.Fatal(err)
	}
	if ls, _ := h.List(at("A/call1"), "/"); len(ls) != 2 {
		t.Errorf("the subagent sees %v, want its parent's and its own", ls)
	}
	for _, other := range []string{"B", "A.", "a", "A_call1"} {
		if ls, _ := h.List(at(other), "/"); len(ls) != 0 {
			t.Errorf("thread %q sees %v", other, ls)
		}
	}
	if _, err := h.Read(context.Background(), "/A.md", 0, 0); err == nil {
		t.Error("a read outside any run succeeded")
	}
	if historyFolder("A.") == historyFolder("A_") || historyFolder("../x") == "../x" {
		t.Error("two thread ids share a folder, or an id escapes")
	}
	// A history an older version kept at the top is moved into the
	// thread's folder when the thread first uses it; deleting the thread
	// deletes both.
	if err := os.WriteFile(filepath.Join(dir, "old.md"), []byte("old history\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r, err := h.Read(at("old"), "/old.md", 0, 0); err != nil || len(r.Lines) != 1 {
		t.Errorf("old history: %v %v", r, err)
	}
	if err := RemoveHistory(dir, "A"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "A")); !os.IsNotExist(err) {
		t.Errorf("A's history outlived it: %v", err)
	}
}
