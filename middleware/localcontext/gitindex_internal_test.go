package localcontext

import (
	"encoding/binary"
	"testing"
)

// v2index builds a version-2 index of the given paths.
func v2index(paths ...string) []byte {
	b := []byte("DIRC")
	b = binary.BigEndian.AppendUint32(b, 2)
	b = binary.BigEndian.AppendUint32(b, uint32(len(paths)))
	for _, p := range paths {
		e := make([]byte, 62)
		binary.BigEndian.PutUint32(e[24:], 0o100644)
		binary.BigEndian.PutUint32(e[36:], 10)
		binary.BigEndian.PutUint16(e[60:], uint16(len(p)))
		e = append(e, p...)
		for len(e)%8 != 0 || len(e) == 62+len(p) {
			e = append(e, 0)
		}
		b = append(b, e...)
	}
	return b
}

func TestReadIndex(t *testing.T) {
	es, err := readIndex(v2index("a.go", "sub/b.go"))
	if err != nil || len(es) != 2 || es[0].path != "a.go" || es[1].path != "sub/b.go" || es[1].size != 10 {
		t.Fatalf("%+v %v", es, err)
	}
	for _, bad := range [][]byte{nil, []byte("DIRC"), v2index("a.go")[:30], append([]byte("XXXX"), v2index("a")[4:]...)} {
		if _, err := readIndex(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// A hostile index is an error or entries, never a panic or a hang.
func FuzzReadIndex(f *testing.F) {
	f.Add(v2index("a.go", "b/c.go"))
	v4 := []byte("DIRC\x00\x00\x00\x04\x00\x00\x00\x01")
	v4 = append(v4, make([]byte, 62)...)
	v4 = append(v4, 0, 'a', 0)
	f.Add(v4)
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := readIndex(data)
		if err == nil && len(es) > maxIndexEntries {
			t.Fatalf("%d entries", len(es))
		}
	})
}
