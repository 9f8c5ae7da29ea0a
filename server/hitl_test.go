package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server/internal/servertest"
)

// TestApprovalAndResume stops a run for approval of write_file and
// resumes it with each decision the Deep Agents UI sends.
func TestApprovalAndResume(t *testing.T) {
	tests := []struct {
		name     string
		decision map[string]any
		want     string // the file's content after the run; "" for none
		result   string // the tool message's status
	}{
		{"approve", map[string]any{"type": "approve"}, "# Report", "success"},
		{"edit", map[string]any{"type": "edit", "edited_action": map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/report.md", "content": "edited"}}}, "edited", "success"},
		{"reject", map[string]any{"type": "reject", "message": "not now"}, "", "error"},
		{"edit, as LangChain JS spells it", map[string]any{"type": "edit", "editedAction": map[string]any{"name": "write_file", "args": map[string]any{"file_path": "/report.md", "content": "edited"}}}, "edited", "success"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, servertest.Options{InterruptOn: []string{"write_file"}},
				replay.Turn{ToolCalls: []llm.ToolCall{servertest.Call("c1", "write_file", `{"file_path":"/report.md","content":"# Report"}`)}},
				replay.Turn{Content: "Done."},
			)
			var th map[string]any
			f.JSON(http.MethodPost, "/threads", map[string]any{}, http.StatusOK, &th)
			tid := th["thread_id"].(string)
			evs, _ := f.Stream("/threads/"+tid+"/runs/stream", map[string]any{
				"input": map[string]any{"messages": []any{servertest.Human("write it")}}, "stream_mode": []string{"values", "messages-tuple"},
			})
			// The state first, then the interrupt alone, last.
			n := len(evs)
			if n < 3 || evs[n-1].Name != "values" || evs[n-2].Name != "values" {
				t.Fatalf("last events %v", evs)
			}
			irq := servertest.Decode[servertest.WireValues](t, evs[n-1].Data)
			if len(irq.Interrupt) != 1 || len(irq.Messages) != 0 {
				t.Fatalf("interrupt event %s", evs[n-1].Data)
			}
			req := irq.Interrupt[0].Value
			if len(req.ActionRequests) != 1 || req.ActionRequests[0].Name != "write_file" || req.ActionRequests[0].Args["file_path"] != "/report.md" {
				t.Errorf("action requests %+v", req.ActionRequests)
			}
			if len(req.ReviewConfigs) != 1 || req.ReviewConfigs[0]["action_name"] != "write_file" || req.ReviewConfigs[0]["actionName"] != "write_file" || req.ReviewConfigs[0]["allowedDecisions"] == nil {
				t.Errorf("review configs %v", req.ReviewConfigs)
			}
			if len(req.ActionRequestsCamel) != 1 || len(req.ReviewConfigsCamel) != 1 {
				t.Errorf("camel-case spellings: %+v", req)
			}
			state := servertest.Decode[servertest.WireValues](t, evs[n-2].Data)
			if m := state.Messages[len(state.Messages)-1]; m.Type != "ai" || len(m.ToolCalls) != 1 {
				t.Errorf("the last message is %+v, want the AI message with the pending call", m)
			}
			// The thread waits; its head says why.
			var got map[string]any
			f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &got)
			if got["status"] != "interrupted" {
				t.Errorf("thread status %v", got["status"])
			}
			var st struct {
				Next  []string `json:"next"`
				Tasks []struct {
					Interrupts []json.RawMessage `json:"interrupts"`
				} `json:"tasks"`
			}
			f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &st)
			if len(st.Next) != 1 || len(st.Tasks) != 1 || len(st.Tasks[0].Interrupts) != 1 {
				t.Errorf("state next %v tasks %+v", st.Next, st.Tasks)
			}
			// Resume, with the head checkpoint as SDK 1.0.3 sends it.
			var head struct {
				Checkpoint map[string]any `json:"checkpoint"`
			}
			f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &head)
			evs, _ = f.Stream("/threads/"+tid+"/runs/stream", map[string]any{
				"input": nil, "command": map[string]any{"resume": map[string]any{"decisions": []any{tt.decision}}},
				"stream_mode": []string{"values", "messages-tuple"}, "checkpoint": head.Checkpoint,
			})
			final := servertest.Decode[servertest.WireValues](t, evs[len(evs)-1].Data)
			var tool *servertest.WireMsg
			for i := range final.Messages {
				if final.Messages[i].Type == "tool" {
					tool = &final.Messages[i]
				}
			}
			if tool == nil || tool.Status != tt.result {
				t.Errorf("tool message %+v, want status %s", tool, tt.result)
			}
			file, ok := final.Files["/report.md"]
			switch {
			case tt.want == "" && ok:
				t.Errorf("rejected write made %s", file)
			case tt.want != "":
				c := servertest.Decode[struct {
					Content []string `json:"content"`
				}](t, file)
				if len(c.Content) != 1 || c.Content[0] != tt.want {
					t.Errorf("file %s, want %q", file, tt.want)
				}
			}
			f.JSON(http.MethodGet, "/threads/"+tid, nil, http.StatusOK, &got)
			if got["status"] != "idle" {
				t.Errorf("after the resume: status %v", got["status"])
			}
			f.JSON(http.MethodGet, "/threads/"+tid+"/state", nil, http.StatusOK, &st)
			if len(st.Next) != 0 || len(st.Tasks) != 0 {
				t.Errorf("after the resume: next %v tasks %v", st.Next, st.Tasks)
			}
		})
	}
}
