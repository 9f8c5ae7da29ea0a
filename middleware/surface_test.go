package middleware_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/middleware"
	"github.com/deepagents-go/deepagents/middleware/todos"
	"github.com/deepagents-go/deepagents/tool"
)

// TestModelSurface pins what the model reads of the file and planning
// tools: the system prompt sections, and each tool's name, description and
// argument schema. A change shows up here as a diff to review; run
// go test ./middleware -run TestModelSurface -update to accept it.
func TestModelSurface(t *testing.T) {
	fs := middleware.NewFilesystem(backend.NewStateBackend(nil))
	plan, err := todos.New(todos.Config{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "# filesystem prompt\n\n%s\n\n# todos prompt\n\n%s\n", fs.SystemPrompt(), plan.SystemPrompt())
	for _, tl := range append(fs.Tools(), plan.Tools()...) {
		writeSpec(t, &b, tl)
	}
	regexp := middleware.NewFilesystem(backend.NewStateBackend(nil))
	regexp.GrepRegexp = true
	for _, tl := range regexp.Tools() {
		if tl.Spec().Name == middleware.GrepTool {
			b.WriteString("\n# with GrepRegexp")
			writeSpec(t, &b, tl)
		}
	}
	golden.Check(t, "testdata/model_surface.golden", b.Bytes())
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
