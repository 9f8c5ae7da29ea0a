package cli

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
)

// TestServeA2AGoClient drives `deepagents serve` as another agent built on
// A2A's Go SDK would: it resolves the assistant's card, which tells its
// auth interceptor to send the key as X-Api-Key, and works in a folder
// (--dir) through message/send, an approval answered on the task, and
// message/stream. (TestOfficialA2AClient in package server drives the
// JavaScript client through every method.)
func TestServeA2AGoClient(t *testing.T) {
	w := newWorld(t)
	const key = "go-client-key"
	p := w.startServer("--model", "replay:inline", "--dir", w.dir, "--interrupt-on", "write_file", "--api-key", key)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The Go SDK's resolver joins a path to the base URL, which escapes
	// LangGraph's ?assistant_id=: it finds the card under the endpoint.
	card, err := agentcard.DefaultResolver.Resolve(ctx, p.url+"/a2a/deepagent", agentcard.WithRequestHeader("X-Api-Key", key))
	if err != nil {
		t.Fatal(err)
	}
	creds := a2aclient.NewInMemoryCredentialsStore()
	creds.Set("session", "apiKey", key)
	client, err := a2aclient.NewFromCard(ctx, card, a2aclient.WithInterceptors(&a2aclient.AuthInterceptor{Service: creds}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Destroy()
	ctx = a2aclient.WithSessionID(ctx, "session")
	text := func(s string, taskID a2a.TaskID) *a2a.MessageSendParams {
		m := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: s})
		m.TaskID = taskID
		return &a2a.MessageSendParams{Message: m}
	}

	res, err := client.SendMessage(ctx, text(`{"turns":[{"tool_calls":[{"name":"write_file","args":{"file_path":"/notes.md","content":"from A2A"}}]},{"content":"Wrote the notes."}]}`, ""))
	if err != nil {
		t.Fatal(err)
	}
	task, ok := res.(*a2a.Task)
	if !ok || task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("the first answer %#v", res)
	}
	if _, err := os.Stat(filepath.Join(w.dir, "notes.md")); !os.IsNotExist(err) {
		t.Fatalf("the file exists before the approval: %v", err)
	}
	res, err = client.SendMessage(ctx, text("approve", task.ID))
	if err != nil {
		t.Fatal(err)
	}
	if done, ok := res.(*a2a.Task); !ok || done.Status.State != a2a.TaskStateCompleted || done.Artifacts[0].Parts[0].(a2a.TextPart).Text != "Wrote the notes." {
		t.Fatalf("after the approval %#v", res)
	}
	if b, err := os.ReadFile(filepath.Join(w.dir, "notes.md")); err != nil || string(b) != "from A2A" {
		t.Errorf("the folder's notes.md: %q %v", b, err)
	}

	var last a2a.Event
	n := 0
	for ev, err := range client.SendStreamingMessage(ctx, text(`{"turns":[{"content":"Streamed."}]}`, "")) {
		if err != nil {
			t.Fatal(err)
		}
		last = ev
		n++
	}
	if st, ok := last.(*a2a.TaskStatusUpdateEvent); !ok || !st.Final || st.Status.State != a2a.TaskStateCompleted || n < 4 {
		t.Errorf("the stream's %d events end with %#v", n, last)
	}
	got, err := client.GetTask(ctx, &a2a.TaskQueryParams{ID: task.ID})
	if err != nil || got.Status.State != a2a.TaskStateCompleted {
		t.Errorf("tasks/get: %v %+v", err, got)
	}
}
