package filesystem_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/middleware/filesystem"
	"github.com/deepagents-go/deepagents/tool"
)

// TestModelSurface pins what the model reads of the file tools: the
// system prompt section, and each tool's name, description and argument
// schema. A change shows up here as a diff to review; run
// go test ./middleware/filesystem -run TestModelSurface -update to accept
// it.
func TestModelSurface(t *testing.T) {
	fs := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil)})
	var b bytes.Buffer
	fmt.Fprintf(&b, "# filesystem prompt\n\n%s\n", fs.SystemPrompt())
	for _, tl := range fs.Tools() {
		writeSpec(t, &b, tl)
	}
	regexp := newFS(t, filesystem.Config{Backend: backend.NewStateBackend(nil), GrepRegexp: true})
	for _, tl := range regexp.Tools() {
		if tl.Spec().Name == filesystem.GrepTool {
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
