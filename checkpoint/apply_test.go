package checkpoint_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/thread"
)

func texts(ms []llm.Message) string {
	var b []string
	for i := range ms {
		b = append(b, ms[i].Text())
	}
	return strings.Join(b, ",")
}

func TestApplyDelta(t *testing.T) {
	f := func(s string) *thread.FileData { return &thread.FileData{Content: s} }
	base := func() *checkpoint.Snapshot {
		return &checkpoint.Snapshot{
			Messages: []llm.Message{llm.UserText("a"), llm.UserText("b"), llm.UserText("c")},
			Files:    map[string]thread.FileData{"/x": {Content: "x"}},
			Values:   map[string]json.RawMessage{"k": json.RawMessage(`1`)},
		}
	}
	tests := []struct {
		name      string
		d         checkpoint.Delta
		msgs      string
		files     map[string]string
		values    map[string]string
		wantError bool
	}{
		{"keep all", checkpoint.Delta{Keep: 3, Messages: []llm.Message{llm.UserText("d")}}, "a,b,c,d", map[string]string{"/x": "x"}, map[string]string{"k": "1"}, false},
		{"rewrite", checkpoint.Delta{Keep: 1, Messages: []llm.Message{llm.UserText("B")}}, "a,B", map[string]string{"/x": "x"}, map[string]string{"k": "1"}, false},
		{"keep none", checkpoint.Delta{}, "", map[string]string{"/x": "x"}, map[string]string{"k": "1"}, false},
		{"value replace", checkpoint.Delta{Keep: 3, Values: map[string]json.RawMessage{"k": json.RawMessage(`[]`)}}, "a,b,c", map[string]string{"/x": "x"}, map[string]string{"k": "[]"}, false},
		{"files", checkpoint.Delta{Keep: 3, Files: map[string]*thread.FileData{"/x": nil, "/y": f("y"), "/z": nil}}, "a,b,c", map[string]string{"/y": "y"}, map[string]string{"k": "1"}, false},
		{"values", checkpoint.Delta{Keep: 3, Values: map[string]json.RawMessage{"k": nil, "n": json.RawMessage(`null`)}}, "a,b,c", map[string]string{"/x": "x"}, map[string]string{"n": "null"}, false},
		{"keep too large", checkpoint.Delta{Keep: 4}, "a,b,c", map[string]string{"/x": "x"}, map[string]string{"k": "1"}, true},
		{"keep negative", checkpoint.Delta{Keep: -1}, "a,b,c", map[string]string{"/x": "x"}, map[string]string{"k": "1"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			err := checkpoint.ApplyDelta(s, &tc.d)
			if (err != nil) != tc.wantError || (err != nil && !errors.Is(err, checkpoint.ErrInvalid)) {
				t.Fatalf("err = %v, want error %v", err, tc.wantError)
			}
			if got := texts(s.Messages); got != tc.msgs {
				t.Errorf("messages = %q, want %q", got, tc.msgs)
			}
			files := map[string]string{}
			for p, fd := range s.Files {
				files[p] = fd.Content
			}
			if !reflect.DeepEqual(files, tc.files) {
				t.Errorf("files = %v, want %v", files, tc.files)
			}
			values := map[string]string{}
			for k, v := range s.Values {
				values[k] = string(v)
			}
			if !reflect.DeepEqual(values, tc.values) {
				t.Errorf("values = %v, want %v", values, tc.values)
			}
		})
	}
}

func TestApplyDeltaNilMaps(t *testing.T) {
	var s checkpoint.Snapshot
	d := checkpoint.Delta{
		Messages: []llm.Message{llm.UserText("a")},
		Files:    map[string]*thread.FileData{"/a": {Content: "A"}, "/gone": nil},
		Values:   map[string]json.RawMessage{"v": json.RawMessage(`2`), "gone": nil},
	}
	if err := checkpoint.ApplyDelta(&s, &d); err != nil {
		t.Fatal(err)
	}
	if len(s.Messages) != 1 || s.Files["/a"].Content != "A" || string(s.Values["v"]) != "2" || len(s.Files) != 1 || len(s.Values) != 1 {
		t.Errorf("snapshot = %+v", s)
	}
}

func TestSnapshotClone(t *testing.T) {
	s := &checkpoint.Snapshot{
		Info:     checkpoint.Info{ID: "c", Meta: json.RawMessage(`{"a":1}`)},
		Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{{Type: llm.PartImage, Data: []byte{1}}}}},
		Files:    map[string]thread.FileData{"/a": {Content: "A"}},
		Values:   map[string]json.RawMessage{"v": json.RawMessage(`1`), "w": json.RawMessage(`[1]`)},
	}
	c := s.Clone()
	if !reflect.DeepEqual(c, s) {
		t.Fatalf("clone differs: %+v", c)
	}
	c.Meta[1] = 'b'
	c.Messages[0].Parts[0].Data[0] = 2
	c.Values["w"][1] = '2'
	c.Files["/a"] = thread.FileData{Content: "B"}
	c.Values["v"][0] = '3'
	if string(s.Meta) != `{"a":1}` || s.Messages[0].Parts[0].Data[0] != 1 || string(s.Values["w"]) != `[1]` || s.Files["/a"].Content != "A" || string(s.Values["v"]) != "1" {
		t.Errorf("changing the clone changed the original: %+v", s)
	}
}

func TestApplyDeltaAllocs(t *testing.T) {
	s := &checkpoint.Snapshot{Messages: make([]llm.Message, 0, 64)}
	d := &checkpoint.Delta{Messages: []llm.Message{llm.UserText("a"), llm.UserText("b")}}
	allocs := testing.AllocsPerRun(100, func() {
		d.Keep = 0
		_ = checkpoint.ApplyDelta(s, d)
		d.Keep = 2
		_ = checkpoint.ApplyDelta(s, d)
	})
	if allocs != 0 {
		t.Errorf("ApplyDelta allocated %v times with room to grow", allocs)
	}
}

func TestValidateID(t *testing.T) {
	for _, ok := range []string{"a", "thread-1", "スレッド", strings.Repeat("x", checkpoint.MaxIDLen), "a b/c:d"} {
		if err := checkpoint.ValidateID("id", ok); err != nil {
			t.Errorf("ValidateID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a\x00", "a\tb", "\x7f", "\xff", strings.Repeat("x", checkpoint.MaxIDLen+1)} {
		if err := checkpoint.ValidateID("id", bad); !errors.Is(err, checkpoint.ErrInvalid) {
			t.Errorf("ValidateID(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestValidateMetadata(t *testing.T) {
	for _, ok := range []string{"", "null", `{}`, ` {"a":[1]}`} {
		var m json.RawMessage
		if ok != "" {
			m = json.RawMessage(ok)
		}
		if err := checkpoint.ValidateMetadata(m); err != nil {
			t.Errorf("ValidateMetadata(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{`[]`, `1`, `"s"`, `{`, `nul`} {
		if err := checkpoint.ValidateMetadata(json.RawMessage(bad)); !errors.Is(err, checkpoint.ErrInvalid) {
			t.Errorf("ValidateMetadata(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

func FuzzValidateID(f *testing.F) {
	for _, s := range []string{"", "a", "a\x00", "スレッド", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := checkpoint.ValidateID("id", s)
		if err != nil && !errors.Is(err, checkpoint.ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
		if err == nil && (s == "" || strings.ContainsAny(s, "\x00\n\r\t") || len(s) > checkpoint.MaxIDLen) {
			t.Fatalf("accepted %q", s)
		}
	})
}
