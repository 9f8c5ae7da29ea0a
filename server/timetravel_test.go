package server_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// wireState is what these tests read of a ThreadState.
type wireState struct {
	Values struct {
		Messages []struct {
			Type    string `json:"type"`
			Content any    `json:"content"`
		} `json:"messages"`
		Files map[string]any `json:"files"`
	} `json:"values"`
	Metadata   map[string]any `json:"metadata"`
	Checkpoint *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"checkpoint"`
	Parent *struct {
		CheckpointID string `json:"checkpoint_id"`
	} `json:"parent_checkpoint"`
}

func (s wireState) id() string { return s.Checkpoint.CheckpointID }

func (s wireState) parent() string {
	if s.Parent == nil {
		return ""
	}
	return s.Parent.CheckpointID
}

// texts is the conversation of a state, one content per message.
func (s wireState) texts() []string {
	var out []string
	for _, m := range s.Values.Messages {
		out = append(out, fmt.Sprint(m.Content))
	}
	return out
}

// turns makes a thread and runs it once per prompt, each answered by the
// model's next turn; it returns the thread and the head after each run.
func turns(f *fixture, prompts ...string) (string, []string) {
	f.T.Helper()
	var th map[string]any
	f.JSON(http.MethodPost, "/threads", nil, http.StatusOK, &th)
	tid := th["thread_id"].(string)
	var heads []string
	for _, p := range prompts {
		f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "deepagent", "input": map[string]any{"messages": []any{servertest.Human(p)}}}, http.StatusOK, nil)
		var st wireState
		f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &st)
		heads = append(heads, st.id())
	}
	return tid, heads
}

func ids(states []wireState) []string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = s.id()
	}
	return out
}

// TestHistoryPaging pages through a thread's history in every form the
// SDKs send before (a config, a checkpoint object, an ID; GET's query
// parameter) and checks that each walk visits every checkpoint once, in
// order, and stops. Before, before as a config was ignored, so a client
// paging got the newest states again and again, and GET ignored limit.
func TestHistoryPaging(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("a1", "a2", "a3", "a4", "a5", "a6", "a7")...)
	tid, _ := turns(f, "q1", "q2", "q3", "q4", "q5", "q6", "q7")
	path := "/threads/" + tid + "/history"
	var all []wireState
	f.JSON(http.MethodPost, path, map[string]any{"limit": 1000}, http.StatusOK, &all)
	if len(all) <= 10 {
		t.Fatalf("only %d checkpoints; the test needs more than 10", len(all))
	}
	for i := range all[:len(all)-1] {
		if all[i].parent() != all[i+1].id() {
			t.Fatalf("history %d: parent %s, next %s", i, all[i].parent(), all[i+1].id())
		}
	}
	want := ids(all)

	// The default limit is 10, on POST and GET alike.
	var page []wireState
	f.JSON(http.MethodPost, path, map[string]any{}, http.StatusOK, &page)
	if len(page) != 10 {
		t.Errorf("POST without limit: %d states, want 10", len(page))
	}
	f.JSON(http.MethodGet, path, nil, http.StatusOK, &page)
	if len(page) != 10 {
		t.Errorf("GET without limit: %d states, want 10", len(page))
	}
	f.JSON(http.MethodGet, path+"?limit=3", nil, http.StatusOK, &page)
	if len(page) != 3 {
		t.Errorf("GET limit=3: %d states", len(page))
	}

	forms := map[string]func(id string) (string, string, any){
		"config": func(id string) (string, string, any) {
			return http.MethodPost, path, map[string]any{"limit": 3, "before": map[string]any{"configurable": map[string]any{"checkpoint_id": id}}}
		},
		"checkpoint object": func(id string) (string, string, any) {
			return http.MethodPost, path, map[string]any{"limit": 3, "before": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": id, "checkpoint_map": nil}}
		},
		"id": func(id string) (string, string, any) {
			return http.MethodPost, path, map[string]any{"limit": 3, "before": id}
		},
		"GET": func(id string) (string, string, any) {
			p := path + "?limit=3"
			if id != "" {
				p += "&before=" + url.QueryEscape(id)
			}
			return http.MethodGet, p, nil
		},
		"GET with a config": func(id string) (string, string, any) {
			p := path + "?limit=3"
			if id != "" {
				p += "&before=" + url.QueryEscape(`{"configurable":{"checkpoint_id":"`+id+`"}}`)
			}
			return http.MethodGet, p, nil
		},
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			var got []string
			before := ""
			for range len(want) + 2 {
				method, p, body := form(before)
				if before == "" && body != nil {
					body = map[string]any{"limit": 3}
				}
				var page []wireState
				f.JSON(method, p, body, http.StatusOK, &page)
				if len(page) == 0 {
					break
				}
				got = append(got, ids(page)...)
				before = page[len(page)-1].id()
			}
			if !slices.Equal(got, want) {
				t.Errorf("walked %v\nwant   %v", got, want)
			}
		})
	}

	// checkpoint keeps that checkpoint only, as LangGraph's checkpointers
	// do; metadata keeps the states whose metadata contains it.
	f.JSON(http.MethodPost, path, map[string]any{"checkpoint": map[string]any{"checkpoint_id": want[4], "checkpoint_ns": ""}}, http.StatusOK, &page)
	if len(page) != 1 || page[0].id() != want[4] {
		t.Errorf("checkpoint filter: %v", ids(page))
	}
	step := all[2].Metadata["step"]
	f.JSON(http.MethodPost, path, map[string]any{"metadata": map[string]any{"step": step}, "limit": 100}, http.StatusOK, &page)
	if len(page) == 0 || !slices.Contains(ids(page), want[2]) {
		t.Errorf("metadata filter step %v: %v", step, ids(page))
	}
	for _, s := range page {
		if s.Metadata["step"] != step {
			t.Errorf("metadata filter step %v kept step %v", step, s.Metadata["step"])
		}
	}
	// A before older than all is the end; a malformed limit is refused.
	f.JSON(http.MethodPost, path, map[string]any{"before": want[len(want)-1]}, http.StatusOK, &page)
	if len(page) != 0 {
		t.Errorf("before the first checkpoint: %v", ids(page))
	}
	if code, b, _ := f.Do(http.MethodGet, path+"?limit=x", nil); code != http.StatusUnprocessableEntity {
		t.Errorf("limit=x: %d %s", code, b)
	}
	if code, b, _ := f.Do(http.MethodPost, path, map[string]any{"limit": -1}); code != http.StatusUnprocessableEntity {
		t.Errorf("limit -1: %d %s", code, b)
	}
}

// TestRunFromCheckpoint runs from an earlier checkpoint with checkpoint_id
// and with checkpoint: the run builds on that checkpoint's state, its first
// checkpoint's parent is it, the thread's head moves to the new branch, and
// the abandoned branch stays loadable and in the history.
func TestRunFromCheckpoint(t *testing.T) {
	for _, form := range []string{"checkpoint_id", "checkpoint"} {
		t.Run(form, func(t *testing.T) {
			f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("one", "two", "three")...)
			tid, heads := turns(f, "first", "second")
			body := map[string]any{"assistant_id": "deepagent", "input": map[string]any{"messages": []any{servertest.Human("third")}}}
			if form == "checkpoint_id" {
				body["checkpoint_id"] = heads[0]
			} else {
				body["checkpoint"] = map[string]any{"checkpoint_ns": "", "checkpoint_id": heads[0], "checkpoint_map": nil}
			}
			var out struct {
				Messages []struct {
					Content any `json:"content"`
				} `json:"messages"`
			}
			f.JSON(http.MethodPost, "/threads/"+tid+"/runs/wait", body, http.StatusOK, &out)
			var got []string
			for _, m := range out.Messages {
				got = append(got, fmt.Sprint(m.Content))
			}
			if want := []string{"first", "one", "third", "three"}; !slices.Equal(got, want) {
				t.Errorf("the run's values: %q, want %q", got, want)
			}
			var head wireState
			f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &head)
			if want := []string{"first", "one", "third", "three"}; !slices.Equal(head.texts(), want) {
				t.Errorf("the head: %q, want %q", head.texts(), want)
			}
			var all []wireState
			f.JSON(http.MethodPost, "/threads/"+tid+"/history", map[string]any{"limit": 100}, http.StatusOK, &all)
			if all[0].id() != head.id() {
				t.Errorf("history starts at %s, the head is %s", all[0].id(), head.id())
			}
			// Walk the new branch back: it reaches heads[0] without
			// passing heads[1].
			byID := map[string]wireState{}
			for _, s := range all {
				byID[s.id()] = s
			}
			cur := head.id()
			for cur != "" && cur != heads[0] {
				if cur == heads[1] {
					t.Fatalf("the new branch passes through the old head %s", cur)
				}
				cur = byID[cur].parent()
			}
			if cur != heads[0] {
				t.Errorf("the new branch does not start at %s", heads[0])
			}
			// The abandoned branch: loadable, and in the history.
			var old wireState
			f.JSON(http.MethodGet, "/threads/"+tid+"/state/"+heads[1], nil, http.StatusOK, &old)
			if want := []string{"first", "one", "second", "two"}; !slices.Equal(old.texts(), want) {
				t.Errorf("the old branch's head: %q, want %q", old.texts(), want)
			}
			if _, ok := byID[heads[1]]; !ok {
				t.Errorf("the old branch's head %s is not in the history", heads[1])
			}
			// The SDK's getState with a checkpoint object.
			f.JSON(http.MethodPost, "/threads/"+tid+"/state/checkpoint", map[string]any{"checkpoint": map[string]any{"checkpoint_id": heads[1]}}, http.StatusOK, &old)
			if old.id() != heads[1] || len(old.texts()) != 4 {
				t.Errorf("state/checkpoint: %s %q", old.id(), old.texts())
			}
		})
	}
}

// TestRunFromUnknownCheckpoint: a run from a checkpoint the thread lacks
// is refused before it starts.
func TestRunFromUnknownCheckpoint(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("one")...)
	tid, _ := turns(f, "first")
	for _, body := range []map[string]any{
		{"assistant_id": "deepagent", "checkpoint_id": "nope"},
		{"assistant_id": "deepagent", "checkpoint": map[string]any{"checkpoint_id": "nope"}},
	} {
		if code, b, _ := f.Do(http.MethodPost, "/threads/"+tid+"/runs/wait", body); code != http.StatusNotFound {
			t.Errorf("%v: %d %s", body, code, b)
		}
	}
}

// TestUpdateStateForks writes state on an earlier checkpoint (by
// checkpoint_id and by checkpoint) and on the head: the new checkpoint's
// parent is the one named, the head moves to it, and the branch left stays
// loadable.
func TestUpdateStateForks(t *testing.T) {
	f := newFixture(t, servertest.Options{}, servertest.ReplayTurns("one", "two")...)
	tid, heads := turns(f, "first", "second")
	path := "/threads/" + tid + "/state"
	for i, body := range []map[string]any{
		{"values": map[string]any{"files": map[string]any{"/a.txt": "by id"}}, "checkpoint_id": heads[0]},
		{"values": map[string]any{"files": map[string]any{"/a.txt": "by object"}}, "checkpoint": map[string]any{"thread_id": tid, "checkpoint_ns": "", "checkpoint_id": heads[0]}, "as_node": "model"},
	} {
		var up struct {
			Checkpoint struct {
				CheckpointID string `json:"checkpoint_id"`
			} `json:"checkpoint"`
		}
		f.JSON(http.MethodPost, path, body, http.StatusOK, &up)
		var head wireState
		f.JSON(http.MethodGet, path, nil, http.StatusOK, &head)
		if head.id() != up.Checkpoint.CheckpointID || head.parent() != heads[0] {
			t.Errorf("update %d: head %s (parent %s), want %s (parent %s)", i, head.id(), head.parent(), up.Checkpoint.CheckpointID, heads[0])
		}
		if want := []string{"first", "one"}; !slices.Equal(head.texts(), want) {
			t.Errorf("update %d: messages %q, want %q", i, head.texts(), want)
		}
		if _, ok := head.Values.Files["/a.txt"]; !ok {
			t.Errorf("update %d: files %v", i, head.Values.Files)
		}
	}
	var old wireState
	f.JSON(http.MethodGet, path+"/"+heads[1], nil, http.StatusOK, &old)
	if len(old.texts()) != 4 || len(old.Values.Files) != 0 {
		t.Errorf("the old branch: %q, files %v", old.texts(), old.Values.Files)
	}
	// Without a checkpoint, the update applies to the head.
	var head wireState
	f.JSON(http.MethodGet, path, nil, http.StatusOK, &head)
	f.JSON(http.MethodPost, path, map[string]any{"values": map[string]any{"files": map[string]any{"/b.txt": "b"}}}, http.StatusOK, nil)
	var next wireState
	f.JSON(http.MethodGet, path, nil, http.StatusOK, &next)
	if next.parent() != head.id() || len(next.Values.Files) != 2 {
		t.Errorf("update on the head: parent %s (want %s), files %v", next.parent(), head.id(), next.Values.Files)
	}
	if code, b, _ := f.Do(http.MethodPost, path, map[string]any{"values": map[string]any{}, "checkpoint_id": "nope"}); code != http.StatusNotFound {
		t.Errorf("unknown checkpoint: %d %s", code, b)
	}
}
