package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents"

	"github.com/google/go-cmp/cmp"
)

func TestAskDecisions(t *testing.T) {
	reqs := []deepagents.ActionRequest{
		{Tool: "write_file", Args: json.RawMessage(`{"file_path":"/a"}`)},
		{Tool: "execute", Args: json.RawMessage(`{"command":"rm -rf /"}`)},
		{Tool: "edit_file", Args: json.RawMessage(`{}`)},
	}
	// An unknown answer and malformed JSON are asked again.
	input := "maybe\na\nr\nnot on my machine\ne\n{broken\ne\n{\"file_path\":\"/b\"}\n"
	var stderr bytes.Buffer
	got, err := askDecisions(Env{Stdin: strings.NewReader(input), Stderr: &stderr}, reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := []deepagents.Decision{
		{Type: deepagents.DecisionApprove},
		{Type: deepagents.DecisionReject, Message: "not on my machine"},
		{Type: deepagents.DecisionEdit, Args: json.RawMessage(`{"file_path":"/b"}`)},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	for _, s := range []string{"Approval needed (2 of 3): execute", `rm -rf /`, "JSON object"} {
		if !strings.Contains(stderr.String(), s) {
			t.Errorf("prompt lacks %q:\n%s", s, stderr.String())
		}
	}
	if _, err := askDecisions(Env{Stdin: strings.NewReader("a\n"), Stderr: &stderr}, reqs); err == nil {
		t.Error("input ending before every decision was given: no error")
	}
}

func TestParseDecision(t *testing.T) {
	for _, c := range []struct {
		in   string
		want deepagents.Decision
		err  bool
	}{
		{"approve", deepagents.Decision{Type: deepagents.DecisionApprove}, false},
		{"reject", deepagents.Decision{Type: deepagents.DecisionReject}, false},
		{"reject: use staging ", deepagents.Decision{Type: deepagents.DecisionReject, Message: "use staging"}, false},
		{`edit:{"a":1}`, deepagents.Decision{Type: deepagents.DecisionEdit, Args: json.RawMessage(`{"a":1}`)}, false},
		{`edit:[1]`, deepagents.Decision{}, true},
		{`edit:`, deepagents.Decision{}, true},
		{"skip", deepagents.Decision{}, true},
	} {
		got, err := parseDecision(c.in)
		if (err != nil) != c.err || !cmp.Equal(got, c.want) {
			t.Errorf("%q: %+v, %v", c.in, got, err)
		}
	}
}
