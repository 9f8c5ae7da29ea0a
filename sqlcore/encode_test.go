package sqlcore

import (
	"errors"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

func TestEncodeCheckpoint(t *testing.T) {
	now := time.Unix(100, 5)
	mod := time.Unix(200, 7)
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: "c", Delta: checkpoint.Delta{
		Messages: []llm.Message{llm.UserText("hi")},
		Files: map[string]*thread.FileData{
			"/empty": {Content: "", ModifiedAt: mod},
			"/gone":  nil,
		},
	}}
	r, err := EncodeCheckpoint(cp, now)
	if err != nil {
		t.Fatal(err)
	}
	if !cp.CreatedAt.Equal(now) || r.Created != now.UnixNano() {
		t.Errorf("created: %v, %d", cp.CreatedAt, r.Created)
	}
	if len(r.Messages) != 1 || string(r.Messages[0]) == "" {
		t.Errorf("messages: %q", r.Messages)
	}
	files := map[string]FileRow{}
	for _, f := range r.Files {
		files[f.Path] = f
	}
	// Empty content must stay apart from a deletion (NULL).
	if f := files["/empty"]; f.Deleted || f.Content == nil || len(f.Content) != 0 || f.Created.Valid ||
		!f.Modified.Valid || f.Modified.Int64 != mod.UnixNano() {
		t.Errorf("/empty: %+v", f)
	}
	if f := files["/gone"]; !f.Deleted || f.Content != nil || f.Created.Valid || f.Modified.Valid {
		t.Errorf("/gone: %+v", f)
	}

	bad := &checkpoint.Checkpoint{ThreadID: "t", ID: "c", Delta: checkpoint.Delta{
		Files: map[string]*thread.FileData{"/a": {CreatedAt: time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)}},
	}}
	if _, err := EncodeCheckpoint(bad, now); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Errorf("a time out of range: %v", err)
	}
}
