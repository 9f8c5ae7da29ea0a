package checkpointtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

// Factory returns a new, empty Saver for one subtest; it closes what it
// opened (a database, say) with t.Cleanup.
type Factory func(t *testing.T) checkpoint.Saver

// Corrupter damages the stored data of one checkpoint (its messages, its
// values, or whatever else the saver stores) so that loading it cannot
// succeed. The suite then expects [checkpoint.ErrCorrupt].
type Corrupter func(t *testing.T, s checkpoint.Saver, threadID, checkpointID string)

// Option configures [Run].
type Option func(*config)

type config struct {
	corrupt Corrupter
}

// WithCorrupter enables the corruption tests with an implementation's way
// of damaging stored data.
func WithCorrupter(c Corrupter) Option { return func(cfg *config) { cfg.corrupt = c } }

// Run runs the conformance suite against the Savers newSaver makes.
func Run(t *testing.T, newSaver Factory, opts ...Option) {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s checkpoint.Saver)
	}{
		{"PutLoad", testPutLoad},
		{"CreatedAtDefault", testCreatedAtDefault},
		{"NotFound", testNotFound},
		{"ParentChain", testParentChain},
		{"Conflict", testConflict},
		{"Invalid", testInvalid},
		{"NewRoot", testNewRoot},
		{"History", testHistory},
		{"Threads", testThreads},
		{"DeleteThread", testDeleteThread},
		{"TimeTravel", testTimeTravel},
		{"Fork", testFork},
		{"HistoryRewrite", testHistoryRewrite},
		{"TodosFilesValues", testTodosFilesValues},
		{"Appends", testAppends},
		{"Isolation", testIsolation},
		{"LargeAndUnicode", testLargeAndUnicode},
		{"Lease", testLease},
		{"LeaseStatuses", testLeaseStatuses},
		{"ReleaseAfterDelete", testReleaseAfterDelete},
		{"CanceledContext", testCanceledContext},
		{"Concurrency", testConcurrency},
		{"PutBatch", testPutBatch},
		{"TopLevelThreads", testTopLevelThreads},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newSaver(t))
		})
	}
	t.Run("Corrupt", func(t *testing.T) {
		if cfg.corrupt == nil {
			t.Skip("no Corrupter given (WithCorrupter)")
		}
		testCorrupt(t, newSaver(t), cfg.corrupt)
	})
}

// testTopLevelThreads: ListOptions.TopLevel leaves out threads started
// from another (a subagent's, PARENT/CALL_ID), and pages count the
// threads kept.
func testTopLevelThreads(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	for _, id := range []string{"p1", "p1/call_1", "p2", "p2/call_1", "p2/call_2", "p3"} {
		chain(t, m, s, id, 1)
		tick()
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{TopLevel: true}); !eq(got, []string{"p3", "p2", "p1"}) {
		t.Errorf("top-level threads = %v, want p3 p2 p1", got)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{TopLevel: true, Limit: 1, Offset: 1}); !eq(got, []string{"p2"}) {
		t.Errorf("second top-level thread = %v, want p2", got)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{TopLevel: true, Status: checkpoint.StatusIdle, Limit: 2}); !eq(got, []string{"p3", "p2"}) {
		t.Errorf("idle top-level threads, limit 2 = %v", got)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{}); len(got) != 6 {
		t.Errorf("all threads = %v, want the six", got)
	}
}

// testPutBatch: a BatchPutter saves a batch in order, a checkpoint the
// parent of the next, each as Put would, with each thread's head at its
// last; a batch with a refused checkpoint saves nothing of it.
func testPutBatch(t *testing.T, s checkpoint.Saver) {
	b, ok := s.(checkpoint.BatchPutter)
	if !ok {
		t.Skip("not a checkpoint.BatchPutter")
	}
	m := newModel()
	ids := chain(t, m, s, "t", 2)
	var batch []*checkpoint.Checkpoint
	var wants []*checkpoint.Snapshot
	parent, keep := ids[1], 4
	for i := range 4 {
		cp := &checkpoint.Checkpoint{ThreadID: "t", ID: fmt.Sprintf("b%d", i), ParentID: parent, Step: 2 + i, CreatedAt: time.Now(),
			Delta: checkpoint.Delta{Keep: keep, Messages: msgs(10+i, 2), Files: map[string]*thread.FileData{fmt.Sprintf("/f%d", i): file("x")}}}
		wants = append(wants, m.expect(t, cp))
		m.record(wants[i])
		batch = append(batch, cp)
		parent, keep = cp.ID, keep+2
	}
	// Another thread's checkpoint among them.
	other := &checkpoint.Checkpoint{ThreadID: "u", ID: "u1", CreatedAt: time.Now(), Delta: checkpoint.Delta{Messages: msgs(0, 1)}}
	want := m.expect(t, other)
	m.record(want)
	batch = slices.Insert(batch, 2, other)
	if err := b.PutBatch(ctxb(), batch); err != nil {
		t.Fatalf("PutBatch: %v", err)
	}
	for _, cp := range batch {
		m.check(t, s, cp.ThreadID, cp.ID)
	}
	if h := head(t, s, "t"); h != "b3" {
		t.Errorf("head = %q, want b3", h)
	}
	if h := head(t, s, "u"); h != "u1" {
		t.Errorf("head of u = %q, want u1", h)
	}
	// The second checkpoint's parent is missing: nothing of the batch is saved.
	bad := []*checkpoint.Checkpoint{
		{ThreadID: "t", ID: "n1", ParentID: "b3", Step: 6, Delta: checkpoint.Delta{Keep: 12, Messages: msgs(20, 1)}},
		{ThreadID: "t", ID: "n2", ParentID: "missing", Step: 7},
	}
	wantErr(t, "PutBatch with a missing parent", b.PutBatch(ctxb(), bad), checkpoint.ErrConflict)
	if _, err := s.Load(ctxb(), "t", "n1"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("the refused batch's first checkpoint: %v, want ErrNotFound", err)
	}
	if h := head(t, s, "t"); h != "b3" {
		t.Errorf("head after a refused batch = %q, want b3", h)
	}
	if err := b.PutBatch(ctxb(), nil); err != nil {
		t.Errorf("an empty batch: %v", err)
	}
}

// ---- the model: expected snapshots, computed with checkpoint.ApplyDelta ----

type model struct {
	mu    sync.Mutex
	snaps map[string]map[string]*checkpoint.Snapshot // thread → checkpoint → state
	heads map[string]string                          // thread → last checkpoint put
}

func newModel() *model {
	return &model{snaps: map[string]map[string]*checkpoint.Snapshot{}, heads: map[string]string{}}
}

// expect computes the state cp should load as.
func (m *model) expect(t testing.TB, cp *checkpoint.Checkpoint) *checkpoint.Snapshot {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	want := &checkpoint.Snapshot{}
	if cp.ParentID != "" {
		p := m.snaps[cp.ThreadID][cp.ParentID]
		if p == nil {
			t.Fatalf("model: no parent %q", cp.ParentID)
		}
		want = p.Clone()
	}
	d := cp.Delta
	if err := checkpoint.ApplyDelta(want, &d); err != nil {
		t.Fatalf("model: ApplyDelta: %v", err)
	}
	want.Info = checkpoint.Info{ThreadID: cp.ThreadID, ID: cp.ID, ParentID: cp.ParentID, Step: cp.Step, CreatedAt: cp.CreatedAt, Meta: cp.Meta}
	return want.Clone() // share nothing with cp
}

func (m *model) record(s *checkpoint.Snapshot) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snaps[s.ThreadID] == nil {
		m.snaps[s.ThreadID] = map[string]*checkpoint.Snapshot{}
	}
	m.snaps[s.ThreadID][s.ID] = s
	m.heads[s.ThreadID] = s.ID
}

// get returns the expected state of a checkpoint, or of the thread's head
// when id is "".
func (m *model) get(thread, id string) *checkpoint.Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id == "" {
		id = m.heads[thread]
	}
	return m.snaps[thread][id]
}

// put saves cp, which must succeed, and records its expected state.
func (m *model) put(t testing.TB, s checkpoint.Saver, cp *checkpoint.Checkpoint) *checkpoint.Snapshot {
	t.Helper()
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = time.Now()
	}
	want := m.expect(t, cp)
	if err := s.Put(context.Background(), cp); err != nil {
		t.Fatalf("Put(%s/%s, parent %q): %v", cp.ThreadID, cp.ID, cp.ParentID, err)
	}
	m.record(want)
	return want
}

// check loads (thread, id) and compares it with the model.
func (m *model) check(t testing.TB, s checkpoint.Saver, thread, id string) {
	t.Helper()
	want := m.get(thread, id)
	if want == nil {
		t.Fatalf("model: no checkpoint %s/%s", thread, id)
	}
	got, err := s.Load(context.Background(), thread, id)
	if err != nil {
		t.Fatalf("Load(%s, %q): %v", thread, id, err)
	}
	compareSnapshots(t, got, want)
}

func compareSnapshots(t testing.TB, got, want *checkpoint.Snapshot) {
	t.Helper()
	where := want.ThreadID + "/" + want.ID
	compareInfo(t, where, got.Info, want.Info)
	if len(got.Messages) != len(want.Messages) {
		t.Fatalf("%s: %d messages, want %d", where, len(got.Messages), len(want.Messages))
	}
	for i := range want.Messages {
		g, w := mustJSON(t, got.Messages[i]), mustJSON(t, want.Messages[i])
		if !bytes.Equal(g, w) {
			t.Fatalf("%s: message %d =\n%s\nwant\n%s", where, i, clip(g), clip(w))
		}
	}
	if len(got.Files) != len(want.Files) {
		t.Errorf("%s: files %v, want %v", where, keys(got.Files), keys(want.Files))
	}
	for p, w := range want.Files {
		g, ok := got.Files[p]
		switch {
		case !ok:
			t.Errorf("%s: file %q missing", where, p)
		case g.Content != w.Content:
			t.Errorf("%s: file %q content = %q, want %q", where, p, clip([]byte(g.Content)), clip([]byte(w.Content)))
		case !g.CreatedAt.Equal(w.CreatedAt) || !g.ModifiedAt.Equal(w.ModifiedAt):
			t.Errorf("%s: file %q times = %v/%v, want %v/%v", where, p, g.CreatedAt, g.ModifiedAt, w.CreatedAt, w.ModifiedAt)
		}
	}
	if len(got.Values) != len(want.Values) {
		t.Errorf("%s: values %v, want %v", where, keys(got.Values), keys(want.Values))
	}
	for k, w := range want.Values {
		if g, ok := got.Values[k]; !ok || !jsonEqual(g, w) {
			t.Errorf("%s: value %q = %s (present %v), want %s", where, k, g, ok, w)
		}
	}
}

func compareInfo(t testing.TB, where string, got, want checkpoint.Info) {
	t.Helper()
	if got.ThreadID != want.ThreadID || got.ID != want.ID || got.ParentID != want.ParentID || got.Step != want.Step {
		t.Errorf("%s: info = %+v, want %+v", where, got, want)
	}
	if !want.CreatedAt.IsZero() && !got.CreatedAt.Equal(want.CreatedAt) {
		t.Errorf("%s: created_at = %v, want %v", where, got.CreatedAt, want.CreatedAt)
	}
	if !jsonEqual(got.Meta, want.Meta) {
		t.Errorf("%s: meta = %s, want %s", where, got.Meta, want.Meta)
	}
}

// ---- helpers ----

func ctxb() context.Context { return context.Background() }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json: %v", err)
	}
	return b
}

// jsonEqual compares two JSON documents by value; nil equals nil and JSON
// null only equals JSON null.
func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(mustMarshal(x), mustMarshal(y))
}

func mustMarshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + fmt.Sprintf("... (%d bytes)", len(b))
	}
	return string(b)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func wantErr(t testing.TB, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}

// msgs returns n varied messages for step i.
func msgs(i, n int) []llm.Message {
	out := make([]llm.Message, 0, n)
	for j := range n {
		k := i*10 + j
		switch k % 4 {
		case 0:
			out = append(out, llm.UserText(fmt.Sprintf("user %d: please look at the report ✓", k)))
		case 1:
			out = append(out, llm.Message{
				Role:      llm.RoleAssistant,
				Parts:     []llm.Part{{Type: llm.PartReasoning, Text: "thinking…", Signature: "sig"}, llm.Text(fmt.Sprintf("calling tool %d", k))},
				ToolCalls: []llm.ToolCall{{ID: fmt.Sprintf("call_%d", k), Name: "read_file", Args: json.RawMessage(`{"file_path": "/a.txt", "limit": 10}`)}},
			})
		case 2:
			out = append(out, llm.ToolResult(fmt.Sprintf("call_%d", k-1), "read_file", fmt.Sprintf("     1\tline %d 日本語", k), k%3 == 0))
		default:
			out = append(out, llm.AssistantText(fmt.Sprintf("done with %d", k)))
		}
	}
	return out
}

func file(content string) *thread.FileData {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC)
	return &thread.FileData{Content: content, CreatedAt: t0, ModifiedAt: t0.Add(time.Duration(len(content)) * time.Second)}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// chain puts n checkpoints c1..cn on thread, each appending two messages,
// and returns their IDs.
func chain(t testing.TB, m *model, s checkpoint.Saver, thread string, n int) []string {
	t.Helper()
	ids := make([]string, n)
	parent := ""
	keep := 0
	for i := range n {
		ids[i] = fmt.Sprintf("c%02d", i+1)
		cp := &checkpoint.Checkpoint{ThreadID: thread, ID: ids[i], ParentID: parent, Step: i,
			Delta: checkpoint.Delta{Keep: keep, Messages: msgs(i, 2)}}
		m.put(t, s, cp)
		parent, keep = ids[i], keep+2
	}
	return ids
}

func head(t testing.TB, s checkpoint.Saver, thread string) string {
	t.Helper()
	th, err := s.Thread(ctxb(), thread)
	if err != nil {
		t.Fatalf("Thread(%s): %v", thread, err)
	}
	return th.Head
}

func historyIDs(t testing.TB, s checkpoint.Saver, thread string, opts checkpoint.ListOptions) ([]string, []string) {
	t.Helper()
	h, err := s.History(ctxb(), thread, opts)
	if err != nil {
		t.Fatalf("History(%s): %v", thread, err)
	}
	ids, parents := make([]string, len(h)), make([]string, len(h))
	for i, in := range h {
		if in.ThreadID != thread {
			t.Errorf("History: thread id %q, want %q", in.ThreadID, thread)
		}
		ids[i], parents[i] = in.ID, in.ParentID
	}
	return ids, parents
}

func threadIDs(t testing.TB, s checkpoint.Saver, opts checkpoint.ListOptions) []string {
	t.Helper()
	ths, err := s.Threads(ctxb(), opts)
	if err != nil {
		t.Fatalf("Threads: %v", err)
	}
	out := make([]string, len(ths))
	for i, th := range ths {
		out[i] = th.ID
	}
	return out
}

func eq(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// tick makes sure the clock moves between two updates whose order a test
// checks.
func tick() { time.Sleep(3 * time.Millisecond) }

// ---- tests ----

func testPutLoad(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	cp := &checkpoint.Checkpoint{
		ThreadID: "t1", ID: "c1", Step: 0,
		CreatedAt: time.Date(2025, 6, 7, 8, 9, 10, 123456789, time.UTC),
		Delta: checkpoint.Delta{
			Messages: msgs(0, 4),
			Files:    map[string]*thread.FileData{"/notes.md": file("# Notes\n")},
			Values:   map[string]json.RawMessage{"lang": raw(`"go"`), "n": raw(`42`), "todos": raw(`[{"content":"write tests","status":"in_progress"}]`)},
		},
		Meta: raw(`{"source":"loop","writes":{"model":1}}`),
	}
	m.put(t, s, cp)
	m.check(t, s, "t1", "c1")
	m.check(t, s, "t1", "")
	got, err := s.Load(ctxb(), "t1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "c1" {
		t.Errorf("Load latest: id %q, want c1", got.ID)
	}
	th, err := s.Thread(ctxb(), "t1")
	if err != nil {
		t.Fatal(err)
	}
	if th.ID != "t1" || th.Head != "c1" || th.Status != checkpoint.StatusIdle {
		t.Errorf("Thread = %+v, want id t1, head c1, status idle", th)
	}
	if th.CreatedAt.IsZero() || th.UpdatedAt.Before(th.CreatedAt) {
		t.Errorf("Thread times: created %v updated %v", th.CreatedAt, th.UpdatedAt)
	}
	// A child keeping everything.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t1", ID: "c2", ParentID: "c1", Step: 1,
		Delta: checkpoint.Delta{Keep: 4, Messages: msgs(1, 2)}})
	m.check(t, s, "t1", "")
	m.check(t, s, "t1", "c1")
	if h := head(t, s, "t1"); h != "c2" {
		t.Errorf("head = %q, want c2", h)
	}
}

func testCreatedAtDefault(t *testing.T, s checkpoint.Saver) {
	before := time.Now().Add(-time.Minute)
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: "c1", Delta: checkpoint.Delta{Messages: msgs(0, 1)}}
	if err := s.Put(ctxb(), cp); err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctxb(), "t", "c1")
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.Before(before) || got.CreatedAt.After(time.Now().Add(time.Minute)) {
		t.Errorf("created_at = %v, want about now", got.CreatedAt)
	}
	h, err := s.History(ctxb(), "t", checkpoint.ListOptions{})
	if err != nil || len(h) != 1 || !h[0].CreatedAt.Equal(got.CreatedAt) {
		t.Errorf("History = %+v, %v; want one entry created at %v", h, err, got.CreatedAt)
	}
}

func testNotFound(t *testing.T, s checkpoint.Saver) {
	_, err := s.Load(ctxb(), "nope", "")
	wantErr(t, "Load missing thread", err, checkpoint.ErrNotFound)
	_, err = s.Load(ctxb(), "nope", "c1")
	wantErr(t, "Load missing thread by id", err, checkpoint.ErrNotFound)
	_, err = s.Thread(ctxb(), "nope")
	wantErr(t, "Thread missing", err, checkpoint.ErrNotFound)
	_, err = s.History(ctxb(), "nope", checkpoint.ListOptions{})
	wantErr(t, "History missing", err, checkpoint.ErrNotFound)

	m := newModel()
	chain(t, m, s, "t", 2)
	_, err = s.Load(ctxb(), "t", "c99")
	wantErr(t, "Load missing checkpoint", err, checkpoint.ErrNotFound)
	// A checkpoint ID of another thread is not found either.
	chain(t, m, s, "u", 3)
	_, err = s.Load(ctxb(), "t", "c03")
	wantErr(t, "Load another thread's checkpoint", err, checkpoint.ErrNotFound)

	// A thread made by Acquire has no checkpoints.
	l, err := s.Acquire(ctxb(), "empty", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctxb(), checkpoint.StatusIdle)
	_, err = s.Load(ctxb(), "empty", "")
	wantErr(t, "Load thread without checkpoints", err, checkpoint.ErrNotFound)
	if h := head(t, s, "empty"); h != "" {
		t.Errorf("head of empty thread = %q", h)
	}
	if ids, _ := historyIDs(t, s, "empty", checkpoint.ListOptions{}); len(ids) != 0 {
		t.Errorf("History of empty thread = %v", ids)
	}
}

func testParentChain(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	ids := chain(t, m, s, "t", 8)
	for _, id := range ids {
		m.check(t, s, "t", id)
	}
	m.check(t, s, "t", "")
	if h := head(t, s, "t"); h != ids[len(ids)-1] {
		t.Errorf("head = %q, want %q", h, ids[len(ids)-1])
	}
}

func testConflict(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	// A missing parent on a new thread creates nothing.
	err := s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "new", ID: "c2", ParentID: "c1", Delta: checkpoint.Delta{Messages: msgs(0, 1)}})
	wantErr(t, "Put with missing parent on a new thread", err, checkpoint.ErrConflict)
	_, err = s.Thread(ctxb(), "new")
	wantErr(t, "Thread after a refused Put", err, checkpoint.ErrNotFound)

	ids := chain(t, m, s, "t", 3)
	err = s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "t", ID: "x", ParentID: "missing"})
	wantErr(t, "Put with missing parent", err, checkpoint.ErrConflict)
	// The parent must belong to the same thread.
	chain(t, m, s, "other", 1)
	err = s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "other", ID: "x", ParentID: "c03"})
	wantErr(t, "Put with another thread's parent", err, checkpoint.ErrConflict)

	// A duplicate ID is refused and changes nothing.
	err = s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "t", ID: "c02", ParentID: "c03", Delta: checkpoint.Delta{Keep: 6, Messages: msgs(9, 3)}})
	wantErr(t, "Put duplicate id", err, checkpoint.ErrConflict)
	err = s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "t", ID: "c01"})
	wantErr(t, "Put duplicate root id", err, checkpoint.ErrConflict)
	if h := head(t, s, "t"); h != ids[2] {
		t.Errorf("head after refused Puts = %q, want %q", h, ids[2])
	}
	for _, id := range ids {
		m.check(t, s, "t", id)
	}
	if got, _ := historyIDs(t, s, "t", checkpoint.ListOptions{}); len(got) != 3 {
		t.Errorf("history after refused Puts = %v", got)
	}
}

func testInvalid(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 2) // c02 holds 4 messages
	long := strings.Repeat("x", checkpoint.MaxIDLen+1)
	cases := []struct {
		name string
		cp   *checkpoint.Checkpoint
	}{
		{"nil", nil},
		{"empty thread", &checkpoint.Checkpoint{ID: "a"}},
		{"empty id", &checkpoint.Checkpoint{ThreadID: "t"}},
		{"control char id", &checkpoint.Checkpoint{ThreadID: "t", ID: "a\nb"}},
		{"NUL thread id", &checkpoint.Checkpoint{ThreadID: "t\x00", ID: "a"}},
		{"long id", &checkpoint.Checkpoint{ThreadID: "t", ID: long}},
		{"invalid UTF-8 thread", &checkpoint.Checkpoint{ThreadID: "t\xff", ID: "a"}},
		{"own parent", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "a"}},
		{"negative keep", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: -1}}},
		{"keep without parent", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", Delta: checkpoint.Delta{Keep: 1}}},
		{"keep beyond parent", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 5}}},
		{"bad todos", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4, Values: map[string]json.RawMessage{"todos": raw(`[{`)}}}},
		{"bad value", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4, Values: map[string]json.RawMessage{"k": raw(`nope`)}}}},
		{"empty value key", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4, Values: map[string]json.RawMessage{"": raw(`1`)}}}},
		{"empty file path", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4, Files: map[string]*thread.FileData{"": file("x")}}}},
		{"bad tool call args", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4, Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "x", Name: "ls", Args: raw(`{"a":`)}}}}}}},
		{"bad meta", &checkpoint.Checkpoint{ThreadID: "t", ID: "a", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4}, Meta: raw(`{"a":`)}},
	}
	for _, tc := range cases {
		err := s.Put(ctxb(), tc.cp)
		wantErr(t, "Put "+tc.name, err, checkpoint.ErrInvalid)
	}
	if h := head(t, s, "t"); h != "c02" {
		t.Errorf("head after invalid Puts = %q", h)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{}); !eq(got, []string{"t"}) {
		t.Errorf("threads after invalid Puts = %v", got)
	}
	// Keep equal to the parent's message count is fine; so is zero.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "full", ParentID: "c02", Delta: checkpoint.Delta{Keep: 4}})
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "zero", ParentID: "c02", Delta: checkpoint.Delta{Keep: 0}})
	m.check(t, s, "t", "full")
	m.check(t, s, "t", "zero")

	_, err := s.Acquire(ctxb(), "", nil)
	wantErr(t, "Acquire empty thread id", err, checkpoint.ErrInvalid)
	_, err = s.Acquire(ctxb(), "m", raw(`[1,2]`))
	wantErr(t, "Acquire with array metadata", err, checkpoint.ErrInvalid)
	_, err = s.Acquire(ctxb(), "m", raw(`{"a":`))
	wantErr(t, "Acquire with bad metadata", err, checkpoint.ErrInvalid)
	if _, err := s.Thread(ctxb(), "m"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("refused Acquire created the thread: %v", err)
	}
}

func testNewRoot(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 3)
	// A second checkpoint without parent starts a branch from an empty state.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "r2", Delta: checkpoint.Delta{Messages: msgs(7, 1)}})
	m.check(t, s, "t", "")
	m.check(t, s, "t", "r2")
	m.check(t, s, "t", "c03")
	if h := head(t, s, "t"); h != "r2" {
		t.Errorf("head = %q, want r2", h)
	}
}

func testHistory(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 5)
	chain(t, m, s, "other", 2)
	ids, parents := historyIDs(t, s, "t", checkpoint.ListOptions{})
	if want := []string{"c05", "c04", "c03", "c02", "c01"}; !eq(ids, want) {
		t.Fatalf("History = %v, want %v", ids, want)
	}
	if want := []string{"c04", "c03", "c02", "c01", ""}; !eq(parents, want) {
		t.Errorf("History parents = %v, want %v", parents, want)
	}
	h, err := s.History(ctxb(), "t", checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range h {
		compareInfo(t, "history "+in.ID, in, m.get("t", in.ID).Info)
	}
	pages := []struct {
		opts checkpoint.ListOptions
		want []string
	}{
		{checkpoint.ListOptions{Limit: 2}, []string{"c05", "c04"}},
		{checkpoint.ListOptions{Limit: 2, Offset: 2}, []string{"c03", "c02"}},
		{checkpoint.ListOptions{Limit: 2, Offset: 4}, []string{"c01"}},
		{checkpoint.ListOptions{Offset: 3}, []string{"c02", "c01"}},
		{checkpoint.ListOptions{Offset: 5}, nil},
		{checkpoint.ListOptions{Offset: 50, Limit: 3}, nil},
		{checkpoint.ListOptions{Limit: 100}, []string{"c05", "c04", "c03", "c02", "c01"}},
		{checkpoint.ListOptions{Status: checkpoint.StatusBusy}, []string{"c05", "c04", "c03", "c02", "c01"}}, // Status is for Threads only
	}
	for _, p := range pages {
		if got, _ := historyIDs(t, s, "t", p.opts); !eq(got, p.want) {
			t.Errorf("History(%+v) = %v, want %v", p.opts, got, p.want)
		}
	}
}

func testThreads(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	if got := threadIDs(t, s, checkpoint.ListOptions{}); len(got) != 0 {
		t.Fatalf("Threads of an empty saver = %v", got)
	}
	chain(t, m, s, "a", 1)
	tick()
	chain(t, m, s, "b", 1)
	tick()
	l, err := s.Acquire(ctxb(), "c", raw(`{"user":"ada","tags":["x"]}`))
	if err != nil {
		t.Fatal(err)
	}
	tick()
	if got, want := threadIDs(t, s, checkpoint.ListOptions{}), []string{"c", "b", "a"}; !eq(got, want) {
		t.Errorf("Threads = %v, want %v (most recently updated first)", got, want)
	}
	// A Put moves a thread to the front.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "a", ID: "c02", ParentID: "c01", Step: 1, Delta: checkpoint.Delta{Keep: 2}})
	tick()
	if got, want := threadIDs(t, s, checkpoint.ListOptions{}), []string{"a", "c", "b"}; !eq(got, want) {
		t.Errorf("Threads after a Put = %v, want %v", got, want)
	}
	ths, err := s.Threads(ctxb(), checkpoint.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ths {
		switch th.ID {
		case "a":
			if th.Head != "c02" || th.Status != checkpoint.StatusIdle {
				t.Errorf("thread a = %+v", th)
			}
		case "c":
			if th.Head != "" || th.Status != checkpoint.StatusBusy || !jsonEqual(th.Metadata, raw(`{"tags":["x"],"user":"ada"}`)) {
				t.Errorf("thread c = %+v (metadata %s)", th, th.Metadata)
			}
		}
		if th.CreatedAt.IsZero() || th.UpdatedAt.Before(th.CreatedAt) {
			t.Errorf("thread %s times: created %v updated %v", th.ID, th.CreatedAt, th.UpdatedAt)
		}
	}
	one, err := s.Thread(ctxb(), "c")
	if err != nil {
		t.Fatal(err)
	}
	if one.Status != checkpoint.StatusBusy || !jsonEqual(one.Metadata, raw(`{"user":"ada","tags":["x"]}`)) {
		t.Errorf("Thread(c) = %+v", one)
	}
	// Status filter.
	if got := threadIDs(t, s, checkpoint.ListOptions{Status: checkpoint.StatusBusy}); !eq(got, []string{"c"}) {
		t.Errorf("busy threads = %v, want [c]", got)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{Status: checkpoint.StatusIdle}); !eq(got, []string{"a", "b"}) {
		t.Errorf("idle threads = %v, want [a b]", got)
	}
	if err := l.Release(ctxb(), checkpoint.StatusInterrupted); err != nil {
		t.Fatal(err)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{Status: checkpoint.StatusInterrupted}); !eq(got, []string{"c"}) {
		t.Errorf("interrupted threads = %v, want [c]", got)
	}
	if got := threadIDs(t, s, checkpoint.ListOptions{Status: checkpoint.StatusBusy}); len(got) != 0 {
		t.Errorf("busy threads after Release = %v", got)
	}
	// The release updated c.
	if got, want := threadIDs(t, s, checkpoint.ListOptions{}), []string{"c", "a", "b"}; !eq(got, want) {
		t.Errorf("Threads after Release = %v, want %v", got, want)
	}
	// Paging.
	pages := []struct {
		opts checkpoint.ListOptions
		want []string
	}{
		{checkpoint.ListOptions{Limit: 1}, []string{"c"}},
		{checkpoint.ListOptions{Limit: 2, Offset: 1}, []string{"a", "b"}},
		{checkpoint.ListOptions{Offset: 2}, []string{"b"}},
		{checkpoint.ListOptions{Offset: 3}, nil},
		{checkpoint.ListOptions{Offset: -1, Limit: -1}, []string{"c", "a", "b"}},
		{checkpoint.ListOptions{Status: checkpoint.StatusIdle, Offset: 1}, []string{"b"}},
	}
	for _, p := range pages {
		if got := threadIDs(t, s, p.opts); !eq(got, p.want) {
			t.Errorf("Threads(%+v) = %v, want %v", p.opts, got, p.want)
		}
	}
}

func testDeleteThread(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 4)
	chain(t, m, s, "keep", 2)
	if err := s.DeleteThread(ctxb(), "t"); err != nil {
		t.Fatal(err)
	}
	_, err := s.Load(ctxb(), "t", "")
	wantErr(t, "Load deleted", err, checkpoint.ErrNotFound)
	_, err = s.Load(ctxb(), "t", "c02")
	wantErr(t, "Load deleted checkpoint", err, checkpoint.ErrNotFound)
	_, err = s.Thread(ctxb(), "t")
	wantErr(t, "Thread deleted", err, checkpoint.ErrNotFound)
	_, err = s.History(ctxb(), "t", checkpoint.ListOptions{})
	wantErr(t, "History deleted", err, checkpoint.ErrNotFound)
	if got := threadIDs(t, s, checkpoint.ListOptions{}); !eq(got, []string{"keep"}) {
		t.Errorf("Threads after delete = %v", got)
	}
	m.check(t, s, "keep", "")
	m.check(t, s, "keep", "c01")
	if err := s.DeleteThread(ctxb(), "t"); err != nil {
		t.Errorf("deleting a deleted thread: %v", err)
	}
	if err := s.DeleteThread(ctxb(), "never"); err != nil {
		t.Errorf("deleting a missing thread: %v", err)
	}
	// The thread can be made again with the same IDs; nothing old leaks in.
	m2 := newModel()
	m2.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "c01", Delta: checkpoint.Delta{Messages: msgs(5, 1)}})
	m2.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "c02", ParentID: "c01", Delta: checkpoint.Delta{Keep: 1}})
	m2.check(t, s, "t", "")
	if ids, _ := historyIDs(t, s, "t", checkpoint.ListOptions{}); !eq(ids, []string{"c02", "c01"}) {
		t.Errorf("History of re-created thread = %v", ids)
	}
}

func testTimeTravel(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	ids := chain(t, m, s, "t", 4) // c01..c04
	old, err := s.Load(ctxb(), "t", "c02")
	if err != nil {
		t.Fatal(err)
	}
	// Resume from c02: a new branch.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "b1", ParentID: old.ID, Step: old.Step + 1,
		Delta: checkpoint.Delta{Keep: len(old.Messages), Messages: msgs(20, 3), Values: map[string]json.RawMessage{"todos": raw(`[{"content":"branch","status":"pending"}]`)}}})
	if h := head(t, s, "t"); h != "b1" {
		t.Errorf("head after branching = %q, want b1", h)
	}
	m.check(t, s, "t", "")
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "b2", ParentID: "b1", Step: old.Step + 2,
		Delta: checkpoint.Delta{Keep: len(old.Messages) + 3, Messages: msgs(21, 2)}})
	m.check(t, s, "t", "")
	// The old branch is intact.
	for _, id := range ids {
		m.check(t, s, "t", id)
	}
	hist, parents := historyIDs(t, s, "t", checkpoint.ListOptions{})
	if want := []string{"b2", "b1", "c04", "c03", "c02", "c01"}; !eq(hist, want) {
		t.Errorf("History = %v, want %v", hist, want)
	}
	if want := []string{"b1", "c02", "c03", "c02", "c01", ""}; !eq(parents, want) {
		t.Errorf("History parents = %v, want %v", parents, want)
	}
	// Continuing the old branch moves the head back to it.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "c05", ParentID: "c04", Step: 4, Delta: checkpoint.Delta{Keep: 8, Messages: msgs(30, 1)}})
	if h := head(t, s, "t"); h != "c05" {
		t.Errorf("head = %q, want c05", h)
	}
	m.check(t, s, "t", "")
	m.check(t, s, "t", "b2")
	// Branch from the root too.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "r1", ParentID: "c01", Delta: checkpoint.Delta{Keep: 1, Messages: msgs(40, 1)}})
	m.check(t, s, "t", "r1")
	m.check(t, s, "t", "b1")
}

// testFork: checkpoint.Fork makes an older checkpoint's state the head,
// keeps the abandoned branch, forks at the start to an empty state, and
// refuses a thread that is running.
func testFork(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 4) // c01..c04
	want, err := s.Load(ctxb(), "t", "c02")
	if err != nil {
		t.Fatal(err)
	}
	id, err := checkpoint.Fork(ctxb(), s, "t", "c02")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Load(ctxb(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.ParentID != "c02" || len(got.Messages) != len(want.Messages) || !reflect.DeepEqual(got.Values, want.Values) || len(got.Files) != len(want.Files) {
		t.Errorf("the fork's head = %+v, want c02's state %+v", got.Info, want.Info)
	}
	m.check(t, s, "t", "c04") // the abandoned branch
	if _, err := checkpoint.Fork(ctxb(), s, "t", "c04"); err != nil {
		t.Fatal(err)
	}
	if back, _ := s.Load(ctxb(), "t", ""); len(back.Messages) != len(m.get("t", "c04").Messages) {
		t.Errorf("forked back to c04: %d messages", len(back.Messages))
	}
	if _, err := checkpoint.Fork(ctxb(), s, "t", ""); err != nil {
		t.Fatal(err)
	}
	if empty, _ := s.Load(ctxb(), "t", ""); len(empty.Messages) != 0 || len(empty.Files) != 0 {
		t.Errorf("forked at the start: %+v", empty)
	}
	// A thread waiting for decisions keeps waiting when a fork fails.
	l, err := s.Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctxb(), checkpoint.StatusInterrupted); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.Fork(ctxb(), s, "t", "nosuch"); err == nil {
		t.Error("forked at a checkpoint the thread does not have")
	}
	if th, err := s.Thread(ctxb(), "t"); err != nil || th.Status != checkpoint.StatusInterrupted {
		t.Errorf("after a failed fork the thread is %+v, %v; want it still interrupted", th, err)
	}
	lease, err := s.Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctxb(), checkpoint.StatusIdle)
	if _, err := checkpoint.Fork(ctxb(), s, "t", "c01"); !errors.Is(err, checkpoint.ErrBusy) {
		t.Errorf("a fork of a running thread: %v, want ErrBusy", err)
	}
}

func testHistoryRewrite(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 3) // c03 holds 6 messages
	// Keep 3 of 6 and re-append two: messages 3..4 are new, 5 is gone.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "w1", ParentID: "c03", Delta: checkpoint.Delta{Keep: 3, Messages: msgs(50, 2)}})
	m.check(t, s, "t", "w1")
	// A normal step after the rewrite.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "w2", ParentID: "w1", Delta: checkpoint.Delta{Keep: 5, Messages: msgs(51, 2)}})
	m.check(t, s, "t", "w2")
	// A rewrite that keeps nothing, then one that keeps part of the new history.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "w3", ParentID: "w2", Delta: checkpoint.Delta{Keep: 0, Messages: msgs(52, 3)}})
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "w4", ParentID: "w3", Delta: checkpoint.Delta{Keep: 2}})
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "w5", ParentID: "w4", Delta: checkpoint.Delta{Keep: 2, Messages: msgs(53, 4)}})
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "w6", ParentID: "w5", Delta: checkpoint.Delta{Keep: 1, Messages: msgs(54, 1)}})
	for _, id := range []string{"c01", "c02", "c03", "w1", "w2", "w3", "w4", "w5", "w6", ""} {
		m.check(t, s, "t", id)
	}
	got, err := s.Load(ctxb(), "t", "w6")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Messages) != 2 {
		t.Errorf("w6 has %d messages, want 2", len(got.Messages))
	}
}

func testTodosFilesValues(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	put := func(id, parent string, d checkpoint.Delta) {
		t.Helper()
		if parent != "" {
			d.Keep = len(m.get("t", parent).Messages)
		}
		m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Delta: d})
		m.check(t, s, "t", id)
	}
	put("c1", "", checkpoint.Delta{
		Files:  map[string]*thread.FileData{"/a.txt": file("A"), "/dir/b.txt": file("B"), "/empty": file("")},
		Values: map[string]json.RawMessage{"x": raw(`1`), "y": raw(`{"deep":[1,2,{"z":null}]}`), "nul": raw(`null`), "todos": raw(`[{"content":"a","status":"pending"}]`)},
	})
	// Nothing changes: todos, files and values carry over.
	put("c2", "c1", checkpoint.Delta{Messages: msgs(1, 1)})
	// Todos replaced; a file overwritten, one deleted, one added; a value
	// deleted, one changed, a missing one deleted (no error).
	put("c3", "c2", checkpoint.Delta{
		Files:  map[string]*thread.FileData{"/a.txt": file("A2"), "/dir/b.txt": nil, "/c.txt": file("C"), "/never": nil},
		Values: map[string]json.RawMessage{"x": nil, "y": raw(`"changed"`), "absent": nil, "todos": raw(`[{"content":"a","status":"completed"},{"content":"b","status":"pending"}]`)},
	})
	// Todos emptied (an empty list is not "unchanged").
	put("c4", "c3", checkpoint.Delta{Values: map[string]json.RawMessage{"todos": raw(`[]`)}})
	// The deleted file and value come back.
	put("c5", "c4", checkpoint.Delta{
		Files:  map[string]*thread.FileData{"/dir/b.txt": file("B again")},
		Values: map[string]json.RawMessage{"x": raw(`[true,false]`)},
	})
	// Delete everything.
	put("c6", "c5", checkpoint.Delta{
		Files:  map[string]*thread.FileData{"/a.txt": nil, "/dir/b.txt": nil, "/c.txt": nil, "/empty": nil},
		Values: map[string]json.RawMessage{"x": nil, "y": nil, "nul": nil, "todos": nil},
	})
	got, err := s.Load(ctxb(), "t", "c6")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Files) != 0 || len(got.Values) != 0 {
		t.Errorf("c6: files %v values %v, want none", keys(got.Files), keys(got.Values))
	}
	got, err = s.Load(ctxb(), "t", "c3")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got.Values["nul"]; !ok {
		t.Errorf("c3: a JSON null value was lost")
	}
	if f, ok := got.Files["/empty"]; !ok || f.Content != "" {
		t.Errorf("c3: empty file = %+v, %v", f, ok)
	}
	// Branching from c3 sees c3's files, not c6's deletions.
	put("b4", "c3", checkpoint.Delta{Files: map[string]*thread.FileData{"/c.txt": file("C on a branch")}})
	for _, id := range []string{"c1", "c2", "c3", "c4", "c5", "c6", "b4"} {
		m.check(t, s, "t", id)
	}
}

// appended returns an append of text at the times file(text) would have.
func appended(text string) thread.FileData { return *file(text) }

func testAppends(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	put := func(id, parent string, d checkpoint.Delta) {
		t.Helper()
		if parent != "" {
			d.Keep = len(m.get("t", parent).Messages)
		}
		m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: id, ParentID: parent, Delta: d})
		m.check(t, s, "t", id)
	}
	// An append to a missing file creates it.
	put("a1", "", checkpoint.Delta{
		Files:   map[string]*thread.FileData{"/log.md": file("# Log\n")},
		Appends: map[string]thread.FileData{"/new.md": appended("first\n")},
	})
	// Appends across checkpoints concatenate, oldest first; an empty
	// append changes only the time.
	put("a2", "a1", checkpoint.Delta{Messages: msgs(2, 1), Appends: map[string]thread.FileData{"/log.md": appended("one\n"), "/new.md": appended("")}})
	put("a3", "a2", checkpoint.Delta{Appends: map[string]thread.FileData{"/log.md": appended("two ✓\n")}})
	// A rewrite replaces everything appended before it.
	put("a4", "a3", checkpoint.Delta{Files: map[string]*thread.FileData{"/log.md": file("rewritten\n")}})
	put("a5", "a4", checkpoint.Delta{Appends: map[string]thread.FileData{"/log.md": appended("three\n")}})
	// A delete, then an append, starts the file afresh.
	put("a6", "a5", checkpoint.Delta{Files: map[string]*thread.FileData{"/new.md": nil}})
	put("a7", "a6", checkpoint.Delta{Appends: map[string]thread.FileData{"/new.md": appended("again\n"), "/log.md": appended("four\n")}})
	// A branch from a3 sees the appends up to a3 only.
	put("b4", "a3", checkpoint.Delta{Appends: map[string]thread.FileData{"/log.md": appended("branch\n")}})
	for _, id := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "b4"} {
		m.check(t, s, "t", id)
	}
	got, err := s.Load(ctxb(), "t", "a7")
	if err != nil {
		t.Fatal(err)
	}
	if want := "rewritten\nthree\nfour\n"; got.Files["/log.md"].Content != want {
		t.Errorf("a7: /log.md = %q, want %q", got.Files["/log.md"].Content, want)
	}
	// Many appends to one file load in order.
	parent := "a7"
	var want strings.Builder
	want.WriteString(got.Files["/log.md"].Content)
	for i := range 50 {
		id := fmt.Sprintf("n%02d", i)
		line := fmt.Sprintf("line %d\n", i)
		want.WriteString(line)
		put(id, parent, checkpoint.Delta{Appends: map[string]thread.FileData{"/log.md": appended(line)}})
		parent = id
	}
	got, err = s.Load(ctxb(), "t", "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Files["/log.md"].Content != want.String() {
		t.Errorf("after 50 appends: /log.md = %q, want %q", clip([]byte(got.Files["/log.md"].Content)), clip([]byte(want.String())))
	}
	// A path both written and appended to is invalid.
	bad := &checkpoint.Checkpoint{ThreadID: "t", ID: "bad", ParentID: parent, Delta: checkpoint.Delta{
		Keep:    len(got.Messages),
		Files:   map[string]*thread.FileData{"/x": file("x")},
		Appends: map[string]thread.FileData{"/x": appended("y")},
	}}
	if err := s.Put(ctxb(), bad); !errors.Is(err, checkpoint.ErrInvalid) {
		t.Errorf("Put with a path both written and appended: %v, want ErrInvalid", err)
	}
}

func testIsolation(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	cp := &checkpoint.Checkpoint{ThreadID: "t", ID: "c1",
		Delta: checkpoint.Delta{
			Messages: []llm.Message{{Role: llm.RoleAssistant, Parts: []llm.Part{llm.Text("hi"), {Type: llm.PartImage, MIMEType: "image/png", Data: []byte{1, 2, 3}}},
				ToolCalls: []llm.ToolCall{{ID: "1", Name: "ls", Args: raw(`{"path":"/"}`)}}}},
			Files:  map[string]*thread.FileData{"/f": file("content")},
			Values: map[string]json.RawMessage{"k": raw(`"v"`), "todos": raw(`[1]`)},
		},
		Meta: raw(`{"m":1}`),
	}
	m.put(t, s, cp)
	// Change everything the caller passed.
	cp.Messages[0].Parts[0].Text = "changed"
	cp.Messages[0].Parts[1].Data[0] = 9
	cp.Messages[0].ToolCalls[0].Args[2] = 'X'
	cp.Messages = append(cp.Messages, llm.UserText("more"))
	cp.Values["todos"][1] = '2'
	cp.Files["/f"].Content = "changed"
	cp.Files["/g"] = file("new")
	cp.Values["k"][1] = 'w'
	cp.Meta[5] = '2'
	m.check(t, s, "t", "c1")
	// Change what a Load returned.
	got, err := s.Load(ctxb(), "t", "c1")
	if err != nil {
		t.Fatal(err)
	}
	got.Messages[0].Parts[0].Text = "changed"
	got.Messages[0].Parts[1].Data[0] = 9
	got.Messages[0].ToolCalls[0].Args[2] = 'X'
	got.Values["todos"][1] = '2'
	got.Files["/f"] = thread.FileData{Content: "changed"}
	got.Values["k"][1] = 'w'
	got.Values["new"] = raw(`1`)
	if len(got.Meta) > 5 {
		got.Meta[5] = '2'
	}
	m.check(t, s, "t", "c1")
}

func testLargeAndUnicode(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	big := strings.Repeat("0123456789abcdef✓ ", 1<<16) // about 1.2 MiB
	bin := make([]byte, 4096)
	for i := range bin {
		bin[i] = byte(i)
	}
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "スレッド/1 ✓", ID: "检查点-1", Meta: raw(`{"emoji":"😀","esc":"\u0000\n\"quoted\""}`),
		Delta: checkpoint.Delta{
			Messages: []llm.Message{
				llm.UserText(big),
				{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, MIMEType: "image/png", Data: bin}, {Type: llm.PartImage, URL: "https://example.com/a.png"}}},
				{Role: llm.RoleAssistant, Parts: []llm.Part{{Type: llm.PartReasoning, Redacted: true, Data: []byte("opaque")}}},
				llm.AssistantText("한국어 中文 العربية \"quotes\" \\ back\tslash\u2028"),
			},
			Files:  map[string]*thread.FileData{"/données/ファイル.txt": file("line1\nline2\x00binary\xff\xfe"), "/big.txt": file(big)},
			Values: map[string]json.RawMessage{"ключ": raw(`{"v":"значение","n":1.5e300,"i":-12345678901234}`), "todos": raw(`[{"content":"✓ done","status":"completed"}]`)},
		}})
	m.check(t, s, "スレッド/1 ✓", "检查点-1")
	m.check(t, s, "スレッド/1 ✓", "")
}

func testLease(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	l1, err := s.Acquire(ctxb(), "t", raw(`{"owner":"first"}`))
	if err != nil {
		t.Fatal(err)
	}
	th, err := s.Thread(ctxb(), "t")
	if err != nil {
		t.Fatal(err)
	}
	if th.Status != checkpoint.StatusBusy || !jsonEqual(th.Metadata, raw(`{"owner":"first"}`)) {
		t.Errorf("after Acquire: %+v", th)
	}
	_, err = s.Acquire(ctxb(), "t", nil)
	wantErr(t, "second Acquire", err, checkpoint.ErrBusy)
	// Other threads are not affected.
	l2, err := s.Acquire(ctxb(), "u", nil)
	if err != nil {
		t.Fatalf("Acquire of another thread: %v", err)
	}
	// Puts work while the thread is held.
	chain(t, m, s, "t", 2)
	m.check(t, s, "t", "")
	// A bad status is refused and the lease stays held.
	for _, bad := range []checkpoint.Status{checkpoint.StatusBusy, "", "done"} {
		wantErr(t, fmt.Sprintf("Release(%q)", bad), l1.Release(ctxb(), bad), checkpoint.ErrInvalid)
	}
	_, err = s.Acquire(ctxb(), "t", nil)
	wantErr(t, "Acquire after a refused Release", err, checkpoint.ErrBusy)
	if err := l1.Release(ctxb(), checkpoint.StatusInterrupted); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if th, _ := s.Thread(ctxb(), "t"); th == nil || th.Status != checkpoint.StatusInterrupted || th.Head != "c02" {
		t.Errorf("after Release(interrupted): %+v", th)
	}
	// Releasing twice is harmless and changes nothing.
	if err := l1.Release(ctxb(), checkpoint.StatusError); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if th, _ := s.Thread(ctxb(), "t"); th == nil || th.Status != checkpoint.StatusInterrupted {
		t.Errorf("second Release changed the status: %+v", th)
	}
	// Acquire again; metadata of an existing thread is kept.
	l3, err := s.Acquire(ctxb(), "t", raw(`{"owner":"second"}`))
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	th, _ = s.Thread(ctxb(), "t")
	if th == nil || th.Status != checkpoint.StatusBusy || !jsonEqual(th.Metadata, raw(`{"owner":"first"}`)) {
		t.Errorf("after second Acquire: %+v", th)
	}
	// The first lease, released, cannot end the second one's hold.
	if err := l1.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Errorf("stale Release: %v", err)
	}
	if th, _ := s.Thread(ctxb(), "t"); th == nil || th.Status != checkpoint.StatusBusy {
		t.Errorf("a stale Release changed the status: %+v", th)
	}
	if err := l3.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
	if err := l2.Release(ctxb(), checkpoint.StatusError); err != nil {
		t.Fatal(err)
	}
	m.check(t, s, "t", "")
	// Acquire on a thread made by Put.
	chain(t, m, s, "p", 1)
	l4, err := s.Acquire(ctxb(), "p", raw(`{"late":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if th, _ := s.Thread(ctxb(), "p"); th == nil || th.Head != "c01" || th.Status != checkpoint.StatusBusy {
		t.Errorf("Acquire of a Put-made thread: %+v", th)
	}
	if err := l4.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
}

func testLeaseStatuses(t *testing.T, s checkpoint.Saver) {
	for _, st := range []checkpoint.Status{checkpoint.StatusIdle, checkpoint.StatusInterrupted, checkpoint.StatusError} {
		id := "t-" + string(st)
		l, err := s.Acquire(ctxb(), id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctxb(), st); err != nil {
			t.Fatal(err)
		}
		th, err := s.Thread(ctxb(), id)
		if err != nil {
			t.Fatal(err)
		}
		if th.Status != st {
			t.Errorf("status after Release(%s) = %s", st, th.Status)
		}
		if got := threadIDs(t, s, checkpoint.ListOptions{Status: st}); !eq(got, []string{id}) {
			t.Errorf("Threads(status %s) = %v, want [%s]", st, got, id)
		}
	}
}

func testReleaseAfterDelete(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	l, err := s.Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	chain(t, m, s, "t", 2)
	if err := s.DeleteThread(ctxb(), "t"); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Errorf("Release of a deleted thread: %v", err)
	}
	if _, err := s.Thread(ctxb(), "t"); !errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("Release re-created the thread: %v", err)
	}
	l2, err := s.Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatalf("Acquire after delete: %v", err)
	}
	if err := l2.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
}

func testCanceledContext(t *testing.T, s checkpoint.Saver) {
	m := newModel()
	chain(t, m, s, "t", 1)
	ctx, cancel := context.WithCancel(ctxb())
	cancel()
	calls := map[string]func() error{
		"Put": func() error {
			return s.Put(ctx, &checkpoint.Checkpoint{ThreadID: "t", ID: "c2", ParentID: "c01", Delta: checkpoint.Delta{Keep: 2}})
		},
		"Load":    func() error { _, err := s.Load(ctx, "t", ""); return err },
		"History": func() error { _, err := s.History(ctx, "t", checkpoint.ListOptions{}); return err },
		"Threads": func() error { _, err := s.Threads(ctx, checkpoint.ListOptions{}); return err },
		"Thread":  func() error { _, err := s.Thread(ctx, "t"); return err },
		"Delete":  func() error { return s.DeleteThread(ctx, "t") },
		"Acquire": func() error { _, err := s.Acquire(ctx, "t", nil); return err },
	}
	for name, call := range calls {
		wantErr(t, name+" with a canceled context", call(), context.Canceled)
	}
	m.check(t, s, "t", "")
	if h := head(t, s, "t"); h != "c01" {
		t.Errorf("head = %q after a canceled Put", h)
	}
	l, err := s.Acquire(ctxb(), "t", nil)
	if err != nil {
		t.Fatalf("Acquire after a canceled Acquire: %v", err)
	}
	if err := l.Release(ctxb(), checkpoint.StatusIdle); err != nil {
		t.Fatal(err)
	}
}

func testConcurrency(t *testing.T, s checkpoint.Saver) {
	const workers, steps = 6, 15
	m := newModel()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	report := func(err error) {
		select {
		case errs <- err:
		default:
		}
	}
	// Independent threads written and read at once.
	for w := range workers {
		wg.Go(func() {
			thread := fmt.Sprintf("w%d", w)
			parent, keep := "", 0
			for i := range steps {
				id := fmt.Sprintf("s%03d", i)
				cp := &checkpoint.Checkpoint{ThreadID: thread, ID: id, ParentID: parent, Step: i, CreatedAt: time.Now(),
					Delta: checkpoint.Delta{Keep: keep, Messages: msgs(i, 2), Values: map[string]json.RawMessage{"i": raw(fmt.Sprint(i))}}}
				want := m.expect(t, cp)
				if err := s.Put(ctxb(), cp); err != nil {
					report(fmt.Errorf("Put %s/%s: %w", thread, id, err))
					return
				}
				m.record(want)
				got, err := s.Load(ctxb(), thread, "")
				if err != nil {
					report(fmt.Errorf("Load %s: %w", thread, err))
					return
				}
				if got.ID != id || len(got.Messages) != keep+2 {
					report(fmt.Errorf("Load %s: id %s with %d messages, want %s with %d", thread, got.ID, len(got.Messages), id, keep+2))
					return
				}
				if _, err := s.Threads(ctxb(), checkpoint.ListOptions{Limit: 3}); err != nil {
					report(fmt.Errorf("Threads: %w", err))
					return
				}
				if _, err := s.History(ctxb(), thread, checkpoint.ListOptions{Limit: 2}); err != nil {
					report(fmt.Errorf("History: %w", err))
					return
				}
				parent, keep = id, keep+2
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}
	for w := range workers {
		thread := fmt.Sprintf("w%d", w)
		m.check(t, s, thread, "")
		m.check(t, s, thread, "s003")
	}

	// Racing Acquires: exactly one wins.
	var won, busy atomic.Int32
	leases := make(chan checkpoint.Lease, workers)
	for range workers {
		wg.Go(func() {
			l, err := s.Acquire(ctxb(), "race", nil)
			switch {
			case err == nil:
				won.Add(1)
				leases <- l
			case errors.Is(err, checkpoint.ErrBusy):
				busy.Add(1)
			default:
				t.Errorf("racing Acquire: %v", err)
			}
		})
	}
	wg.Wait()
	close(leases)
	if won.Load() != 1 || busy.Load() != workers-1 {
		t.Errorf("racing Acquire: %d won, %d busy; want 1 and %d", won.Load(), busy.Load(), workers-1)
	}
	for l := range leases {
		if err := l.Release(ctxb(), checkpoint.StatusIdle); err != nil {
			t.Error(err)
		}
	}

	// Racing Puts of the same ID: exactly one wins; different IDs all do.
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "dup", ID: "root", Delta: checkpoint.Delta{Messages: msgs(0, 1)}})
	var ok, conflict atomic.Int32
	for w := range workers {
		wg.Go(func() {
			err := s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "dup", ID: "same", ParentID: "root", Delta: checkpoint.Delta{Keep: 1, Messages: msgs(w, 1)}})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, checkpoint.ErrConflict):
				conflict.Add(1)
			default:
				t.Errorf("racing Put: %v", err)
			}
			if err := s.Put(ctxb(), &checkpoint.Checkpoint{ThreadID: "dup", ID: fmt.Sprintf("own%d", w), ParentID: "root", Delta: checkpoint.Delta{Keep: 1}}); err != nil {
				t.Errorf("branch Put: %v", err)
			}
		})
	}
	wg.Wait()
	if ok.Load() != 1 || conflict.Load() != workers-1 {
		t.Errorf("racing Put: %d ok, %d conflicts; want 1 and %d", ok.Load(), conflict.Load(), workers-1)
	}
	if ids, _ := historyIDs(t, s, "dup", checkpoint.ListOptions{}); len(ids) != workers+2 {
		t.Errorf("dup history has %d checkpoints, want %d", len(ids), workers+2)
	}
	got, err := s.Load(ctxb(), "dup", "same")
	if err != nil || len(got.Messages) != 2 {
		t.Errorf("Load dup/same: %v, %v", got, err)
	}
}

func testCorrupt(t *testing.T, s checkpoint.Saver, corrupt Corrupter) {
	m := newModel()
	chain(t, m, s, "t", 4)
	chain(t, m, s, "ok", 2)
	corrupt(t, s, "t", "c02")
	for _, id := range []string{"c02", "c03", "c04", ""} {
		_, err := s.Load(ctxb(), "t", id)
		wantErr(t, "Load of corrupt data "+id, err, checkpoint.ErrCorrupt)
	}
	m.check(t, s, "t", "c01")
	m.check(t, s, "ok", "")
	// The thread can still be listed, branched from a good checkpoint and
	// deleted.
	if _, err := s.History(ctxb(), "t", checkpoint.ListOptions{}); err != nil {
		t.Errorf("History of a corrupt thread: %v", err)
	}
	m.put(t, s, &checkpoint.Checkpoint{ThreadID: "t", ID: "fix", ParentID: "c01", Delta: checkpoint.Delta{Keep: 2, Messages: msgs(9, 1)}})
	m.check(t, s, "t", "")
	if err := s.DeleteThread(ctxb(), "t"); err != nil {
		t.Errorf("DeleteThread of a corrupt thread: %v", err)
	}
}
