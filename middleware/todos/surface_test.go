package todos_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/internal/golden"
)

// TestModelSurface pins what the model reads of the planning tool: the
// system prompt section, and the tool's name, description and argument
// schema. A change shows up here as a diff to review; run
// go test ./middleware/todos -run TestModelSurface -update to accept it.
func TestModelSurface(t *testing.T) {
	plan := newTodos(t)
	var b bytes.Buffer
	fmt.Fprintf(&b, "# todos prompt\n\n%s\n", plan.SystemPrompt())
	for _, tl := range plan.Tools() {
		spec := tl.Spec()
		var params bytes.Buffer
		if err := json.Indent(&params, spec.Parameters, "", "  "); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n%s\n", spec.Name, spec.Description, params.String())
	}
	golden.Check(t, "testdata/model_surface.golden", b.Bytes())
}
