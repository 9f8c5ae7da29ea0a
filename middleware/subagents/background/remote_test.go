package background_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware/subagents"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/server"
)

// gateModel is the remote agent's model: it answers "remote: <the last
// user message>", after that message's gate opens when it has one, and
// fails on "fail please".
type gateModel struct {
	mu        sync.Mutex
	gates     map[string]chan struct{}
	started   chan string
	cancelled chan string
}

func newGateModel(gated ...string) *gateModel {
	g := &gateModel{gates: map[string]chan struct{}{}, started: make(chan string, 16), cancelled: make(chan string, 16)}
	for _, s := range gated {
		g.gates[s] = make(chan struct{})
	}
	return g
}

func (g *gateModel) open(s string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	close(g.gates[s])
	delete(g.gates, s)
}

func (g *gateModel) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Chunk, error] {
	return func(yield func(llm.Chunk, error) bool) {
		last := ""
		for _, m := range req.Messages {
			if m.Role == llm.RoleUser {
				last = m.Text()
			}
		}
		g.started <- last
		if last == "fail please" {
			yield(llm.Chunk{}, errors.New("the remote model is down"))
			return
		}
		g.mu.Lock()
		gate := g.gates[last]
		g.mu.Unlock()
		if gate != nil {
			select {
			case <-gate:
			case <-ctx.Done():
				g.cancelled <- last
				yield(llm.Chunk{}, ctx.Err())
				return
			}
		}
		yield(llm.Chunk{Type: llm.ChunkDone, Response: &llm.Response{Message: llm.AssistantText("remote: " + last), StopReason: llm.StopEnd}}, nil)
	}
}

// remoteServer serves an agent on m as graph "researcher" through the
// LangGraph API, as deepagents serve does.
func remoteServer(t *testing.T, m llm.Model, apiKey string) *httptest.Server {
	t.Helper()
	saver := checkpoint.NewMemorySaver()
	a, err := agent.New(agent.Config{Model: m, Checkpointer: saver})
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "researcher", Agent: a}}, Saver: saver, APIKey: apiKey})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		s.Close()
		hs.Close()
	})
	return hs
}

// A remote background task is started on a LangGraph API server, polled
// while it runs, and awaited by another instance of the parent agent (a
// new process) from the thread's records; another is cancelled on the
// server; one is updated with a new run; a failed run reports its error.
func TestAsyncRemote(t *testing.T) {
	noLeaks(t)
	gm := newGateModel("long task", "doomed task")
	hs := remoteServer(t, gm, "secret")
	saver := checkpoint.NewMemorySaver()
	cfg := background.Config{
		Subagents: []background.Subagent{{
			Subagent: subagents.Subagent{Name: "remote", Description: "researches on a server"},
			URL:      hs.URL + "/", GraphID: "researcher",
			Headers: map[string]string{"X-Api-Key": "secret"},
			Client:  hs.Client(),
		}},
		Options: background.Options{PollInterval: 10 * time.Millisecond},
	}
	m1 := &stepModel{}
	a1 := newAsyncAgent(t, m1, saver, cfg)
	var longID, doomedID string
	var out []string
	m1.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "remote", "description": "long task"},
			background.StartAsyncTaskTool, map[string]string{"subagent_type": "remote", "description": "doomed task"})),
		func(req *llm.Request) llm.Message {
			res := toolResults(req)
			longID, doomedID = taskIDOf(t, res[0]), taskIDOf(t, res[1])
			// Both runs are in the model on the server.
			got := map[string]bool{received(t, gm.started, "a remote run"): true, received(t, gm.started, "a remote run"): true}
			if !got["long task"] || !got["doomed task"] {
				t.Errorf("remote runs started with %v", got)
			}
			return calls(background.CheckAsyncTaskTool, map[string]string{"task_id": longID},
				background.CancelAsyncTaskTool, map[string]string{"task_id": doomedID})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return llm.AssistantText("started two")
		},
	)
	if _, err := a1.Invoke(context.Background(), agent.Input{ThreadID: "r", Messages: []llm.Message{llm.UserText("go")}}); err != nil {
		t.Fatal(err)
	}
	if r := parseReport(t, out[0]); r.Status != background.Running || r.TaskID != longID || r.SubagentType != "remote" {
		t.Errorf("check while running = %+v", r)
	}
	if out[1] != "Cancelled async subagent task: "+doomedID {
		t.Errorf("cancel = %q", out[1])
	}
	if got := received(t, gm.cancelled, "the cancelled remote run"); got != "doomed task" {
		t.Errorf("cancelled on the server: %q", got)
	}
	a1.Close()

	// A new process: the remote tasks are found from the thread's records.
	gm.open("long task")
	m2 := &stepModel{}
	a2 := newAsyncAgent(t, m2, saver, cfg)
	out = nil
	m2.add(
		step(calls(background.WaitAsyncTaskTool, map[string]any{"task_id": longID, "timeout": 5},
			background.CheckAsyncTaskTool, map[string]string{"task_id": doomedID})),
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.UpdateAsyncTaskTool, map[string]string{"task_id": longID, "message": "more please"},
				background.StartAsyncTaskTool, map[string]string{"subagent_type": "remote", "description": "fail please"},
				background.StartAsyncTaskTool, map[string]string{"subagent_type": "remote", "description": "quick one"})
		},
		func(req *llm.Request) llm.Message {
			res := toolResults(req)
			out = append(out, res...)
			quickID := taskIDOf(t, res[2])
			waitIdle(t, hs, quickID) // it has finished, but its record still says running
			return calls(background.WaitAsyncTaskTool, map[string]any{"task_id": longID, "timeout": 5},
				background.WaitAsyncTaskTool, map[string]any{"task_id": taskIDOf(t, res[1]), "timeout": 5},
				background.CancelAsyncTaskTool, map[string]string{"task_id": quickID})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return calls(background.ListAsyncTasksTool, map[string]any{})
		},
		func(req *llm.Request) llm.Message {
			out = append(out, toolResults(req)...)
			return llm.AssistantText("done")
		},
	)
	res, err := a2.Invoke(context.Background(), agent.Input{ThreadID: "r", Messages: []llm.Message{llm.UserText("results?")}})
	if err != nil {
		t.Fatal(err)
	}
	if r := parseReport(t, out[0]); r.Status != background.Success || r.Result != "remote: long task" {
		t.Errorf("wait = %+v", r)
	}
	if r := parseReport(t, out[1]); r.Status != background.Cancelled {
		t.Errorf("check of the cancelled task = %+v", r)
	}
	if out[2] != "Updated async subagent. task_id: "+longID {
		t.Errorf("update = %q", out[2])
	}
	if r := parseReport(t, out[5]); r.Status != background.Success || r.Result != "remote: more please" {
		t.Errorf("wait after the update = %+v", r)
	}
	if r := parseReport(t, out[6]); r.Status != background.Error || !strings.Contains(r.Error, "the remote model is down") {
		t.Errorf("failed task = %+v", r)
	}
	if !strings.Contains(out[7], "had already finished (status success); nothing to cancel") {
		t.Errorf("cancel of a finished task = %q", out[7])
	}
	if !strings.HasPrefix(out[8], "4 tracked task(s):") || !strings.Contains(out[8], "status: cancelled") || strings.Count(out[8], "status: success") != 2 || !strings.Contains(out[8], "status: error") {
		t.Errorf("list = %q", out[8])
	}
	recs, _ := background.Tasks(res.State.Values)
	if r := recs[longID]; !r.Remote || r.ThreadID != longID || r.RunID == "" || r.Status != background.Success {
		t.Errorf("record = %+v", r)
	}
}

// waitIdle waits until the runs of a thread of the server have ended.
func waitIdle(t *testing.T, hs *httptest.Server, threadID string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, hs.URL+"/threads/"+threadID+"/runs", nil)
		req.Header.Set("X-Api-Key", "secret")
		res, err := hs.Client().Do(req)
		if err == nil {
			var runs []struct {
				Status string `json:"status"`
			}
			json.NewDecoder(res.Body).Decode(&runs)
			res.Body.Close()
			ended := len(runs) > 0
			for _, r := range runs {
				ended = ended && (r.Status == "success" || r.Status == "error" || r.Status == "interrupted")
			}
			if ended {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("thread %s still has a run going", threadID)
}

// A server that fails, answers nonsense, refuses the key or is gone gives
// the model a clear error result, and the run goes on.
func TestAsyncRemoteFailures(t *testing.T) {
	noLeaks(t)
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.URL.Path, "/fails/"):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"detail":"the database is down"}`))
		case strings.HasPrefix(r.URL.Path, "/nonsense/"):
			w.Write([]byte(`<html>hello</html>`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer bad.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	keyed := remoteServer(t, newGateModel(), "secret")
	remote := func(name, url string) background.Subagent {
		return background.Subagent{Subagent: subagents.Subagent{Name: name, Description: name}, URL: url, GraphID: "researcher", Client: bad.Client()}
	}
	m := &stepModel{}
	a := newAsyncAgent(t, m, nil, background.Config{Subagents: []background.Subagent{
		remote("fails", bad.URL+"/fails"), remote("nonsense", bad.URL+"/nonsense"), remote("gone", goneURL), remote("nokey", keyed.URL),
	}})
	var results []llm.Message
	m.add(
		step(calls(background.StartAsyncTaskTool, map[string]string{"subagent_type": "fails", "description": "x"},
			background.StartAsyncTaskTool, map[string]string{"subagent_type": "nonsense", "description": "x"},
			background.StartAsyncTaskTool, map[string]string{"subagent_type": "gone", "description": "x"},
			background.StartAsyncTaskTool, map[string]string{"subagent_type": "nokey", "description": "x"})),
		func(req *llm.Request) llm.Message {
			results = req.Messages[len(req.Messages)-4:]
			return llm.AssistantText("ok")
		},
	)
	if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		"Error: could not start async subagent fails: remote subagent server: POST /threads: 500 Internal Server Error: the database is down",
		"Error: could not start async subagent nonsense: remote subagent server: POST /threads: the answer is not the JSON expected",
		"Error: could not start async subagent gone: ",
		"Error: could not start async subagent nokey: remote subagent server: POST /threads: 401 Unauthorized: Unauthorized",
	} {
		if !results[i].IsError || !strings.HasPrefix(results[i].Text(), want) {
			t.Errorf("result %d = %q, want %q", i, results[i].Text(), want)
		}
	}
}

// Starts made in parallel, in one turn, count each other: however long
// the server takes to start each (here 50 ms), no more than MaxTasks are
// launched, and no more remote tasks than MaxRunning run.
func TestAsyncParallelStartsKeepTheCaps(t *testing.T) {
	noLeaks(t)
	for _, c := range []struct {
		opts background.Options
		want string
	}{
		{background.Options{MaxTasks: 2}, "Error: this conversation already has 2 background tasks"},
		{background.Options{MaxRunning: 2}, "Error: 2 remote background tasks of this conversation may be running"},
	} {
		gm := newGateModel("job 0", "job 1", "job 2", "job 3")
		hs := remoteServer(t, gm, "")
		slowStart := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				time.Sleep(50 * time.Millisecond)
			}
			proxy(t, hs.URL, w, r)
		}))
		defer slowStart.Close()
		m := &stepModel{}
		c.opts.PollInterval = 10 * time.Millisecond
		a := newAsyncAgent(t, m, nil, background.Config{
			Subagents: []background.Subagent{{Subagent: subagents.Subagent{Name: "remote", Description: "remote"},
				URL: slowStart.URL, GraphID: "researcher", Client: slowStart.Client()}},
			Options: c.opts,
		})
		turn := llm.Message{Role: llm.RoleAssistant}
		for i := range 4 {
			turn.ToolCalls = append(turn.ToolCalls, llm.ToolCall{ID: fmt.Sprintf("start%d", i), Name: background.StartAsyncTaskTool,
				Args: json.RawMessage(fmt.Sprintf(`{"subagent_type":"remote","description":"job %d"}`, i))})
		}
		var results []string
		m.add(step(turn), func(req *llm.Request) llm.Message {
			results = toolResults(req)
			return llm.AssistantText("ok")
		})
		if _, err := a.Invoke(context.Background(), agent.Prompt("go")); err != nil {
			t.Fatal(err)
		}
		launched, refused := 0, 0
		for _, r := range results {
			switch {
			case strings.HasPrefix(r, "Launched async subagent."):
				launched++
			case strings.HasPrefix(r, c.want):
				refused++
			default:
				t.Errorf("unexpected result %q", r)
			}
		}
		if launched != 2 || refused != 2 {
			t.Errorf("%+v: %d launched, %d refused of 4 parallel starts: %q", c.opts, launched, refused, results)
		}
		for i := range 4 {
			gm.open(fmt.Sprintf("job %d", i))
		}
	}
}

// proxy forwards r to base.
func proxy(t *testing.T, base string, w http.ResponseWriter, r *http.Request) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, base+r.URL.RequestURI(), r.Body)
	if err != nil {
		t.Error(err)
		return
	}
	req.Header = r.Header.Clone()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer res.Body.Close()
	for k, v := range res.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(res.StatusCode)
	io.Copy(w, res.Body)
}
