package middleware_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/middleware"
	"github.com/deepagents-go/deepagents/tool"
)

var update = flag.Bool("update", false, "rewrite golden files")

// TestModelSurface pins what the model reads of the file and planning
// tools: the system prompt sections, and each tool's name, description and
// argument schema. A change shows up here as a diff to review; run
// go test ./middleware -run TestModelSurface -update to accept it.
func TestModelSurface(t *testing.T) {
	fs := middleware.NewFilesystem(backend.NewState(nil))
	todos := middleware.NewTodos()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# filesystem prompt\n\n%s\n\n# todos prompt\n\n%s\n", fs.SystemPrompt(), todos.SystemPrompt())
	for _, tl := range append(fs.Tools(), todos.Tools()...) {
		writeSpec(t, &b, tl)
	}
	regexp := middleware.NewFilesystem(backend.NewState(nil))
	regexp.GrepRegexp = true
	for _, tl := range regexp.Tools() {
		if tl.Spec().Name == middleware.GrepTool {
			b.WriteString("\n# with GrepRegexp")
			writeSpec(t, &b, tl)
		}
	}
	golden(t, "model_surface.golden", b.Bytes())
}

func writeSpec(t *testing.T, b *bytes.Buffer, tl tool.Tool) {
	t.Helper()
	spec := tl.Spec()
	var params bytes.Buffer
	if err := json.Indent(&params, spec.Parameters, "", "  "); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(b, "\n## %s\n\n%s\n\n%s\n", spec.Name, spec.Description, params.String())
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, diff)
	}
}
