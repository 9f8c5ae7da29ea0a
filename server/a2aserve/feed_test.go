package a2aserve

import (
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
)

// TestLiveTaskFeedBounded keeps a live task's last a2aFeedLimit events
// however long its run: a follower reads on from where it is, and one that
// fell behind the oldest kept reads on from there.
func TestLiveTaskFeedBounded(t *testing.T) {
	lt := newLiveTask(&taskRecord{ID: "t", ContextID: "c"})
	const n = 2500
	for i := range n {
		lt.mu.Lock()
		lt.add(lt.status(a2a.TaskStateWorking, a2a.NewMessage(a2a.MessageRoleAgent, a2a.TextPart{Text: string(rune('a' + i%26))}), false))
		lt.mu.Unlock()
	}
	if len(lt.events) != a2aFeedLimit {
		t.Fatalf("%d events kept, want %d", len(lt.events), a2aFeedLimit)
	}
	for _, tt := range []struct{ from, want int }{{0, a2aFeedLimit}, {n - 100, 100}, {n, 0}, {n + 5, 0}} {
		evs, next, done, _ := lt.since(tt.from)
		if len(evs) != tt.want || next != n || done {
			t.Errorf("since(%d): %d events, next %d, done %v; want %d, %d", tt.from, len(evs), next, done, tt.want, n)
		}
	}
	evs, _, _, _ := lt.since(n - 1)
	if got := evs[0].(*a2a.TaskStatusUpdateEvent).Status.Message.Parts[0].(a2a.TextPart).Text; got != string(rune('a'+(n-1)%26)) {
		t.Errorf("the last event is %q", got)
	}
}
