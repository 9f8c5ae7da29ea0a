package thread

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/llm"
)

func TestJournal(t *testing.T) {
	s := NewState()
	s.Messages = []llm.Message{llm.UserText("a"), llm.UserText("b")}
	s.BeginJournal()
	if s.Dirty() {
		t.Fatal("a state just loaded is dirty")
	}

	steps := []struct {
		name   string
		change func()
		check  func(t *testing.T, c Changes)
	}{
		{"append", func() { s.Messages = append(s.Messages, llm.UserText("c")) }, func(t *testing.T, c Changes) {
			if c.Keep != 2 || len(c.Messages) != 1 || c.Messages[0].Text() != "c" || c.Values != nil {
				t.Errorf("%+v", c)
			}
		}},
		{"rewrite", func() { s.RewriteMessages(1, []llm.Message{llm.UserText("B")}) }, func(t *testing.T, c Changes) {
			if c.Keep != 1 || len(c.Messages) != 1 || c.Messages[0].Text() != "B" {
				t.Errorf("%+v", c)
			}
		}},
		{"replace, then append", func() {
			s.ReplaceMessage(0, llm.UserText("A"))
			s.Messages = append(s.Messages, llm.UserText("d"))
		}, func(t *testing.T, c Changes) {
			if c.Keep != 0 || len(c.Messages) != 3 || c.Messages[0].Text() != "A" {
				t.Errorf("%+v", c)
			}
		}},
		{"values", func() {
			s.SetValue("plan", json.RawMessage(`["x"]`))
			s.SetValue("k", json.RawMessage(`1`))
			s.SetValue("gone", nil)
		}, func(t *testing.T, c Changes) {
			v, deleted := c.Values["gone"]
			if c.Keep != 3 || len(c.Messages) != 0 || string(c.Values["plan"]) != `["x"]` ||
				string(c.Values["k"]) != "1" || !deleted || v != nil {
				t.Errorf("%+v", c)
			}
		}},
		{"files", func() { s.Files.Put("/f.txt", FileData{Content: "x", ModifiedAt: time.Unix(1, 0)}) }, func(t *testing.T, c Changes) {
			if c.Files["/f.txt"] == nil || c.Values != nil {
				t.Errorf("%+v", c)
			}
		}},
	}
	for _, st := range steps {
		st.change()
		if !s.Dirty() {
			t.Fatalf("%s: not dirty", st.name)
		}
		st.check(t, s.TakeChanges())
		if s.Dirty() {
			t.Fatalf("%s: dirty after TakeChanges", st.name)
		}
	}
	files, values := s.Changed()
	if !slices.Equal(files, []string{"/f.txt"}) || !slices.Equal(values, []string{"gone", "k", "plan"}) {
		t.Errorf("Changed = %v, %v", files, values)
	}
}
