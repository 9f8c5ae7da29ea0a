package isolate

import (
	"os"
	"path/filepath"
	"testing"
)

// A file that goes away between the walk and the copy (the folder is in
// use) is left out of the copy and of its entries, not a failure of the
// fork.
func TestCopyTreeSkipsWhatWentAway(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	for _, n := range []string{"kept.txt", "gone.txt"} {
		if err := os.WriteFile(filepath.Join(src, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("kept.txt", filepath.Join(src, "gone-link")); err != nil {
		t.Fatal(err)
	}
	ents, err := walk(src, 0, 0)
	if err != nil || len(ents) != 3 {
		t.Fatalf("walk: %v %v", ents, err)
	}
	for _, n := range []string{"gone.txt", "gone-link"} {
		if err := os.Remove(filepath.Join(src, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyTree(src, dst, ents); err != nil {
		t.Fatalf("copyTree: %v", err)
	}
	if _, ok := ents["gone.txt"]; ok || len(ents) != 1 {
		t.Errorf("entries after the copy: %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "kept.txt")); err != nil || string(b) != "kept.txt" {
		t.Errorf("kept.txt: %q %v", b, err)
	}
}
