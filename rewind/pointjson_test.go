package rewind

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendPointAsJSON: appendPoint writes what json.Marshal writes, for
// points of every shape: paths and prompts that need escaping (quotes,
// <, >, &, control characters, bytes that are not UTF-8, U+2028), entries
// removed, links, modes, stored and inline contents, notes.
func TestAppendPointAsJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	odd := []string{"a.txt", `q"uote`, "back\\slash", "<html>&", "tab\there", "nl\n", "\xff\xfe", "line\u2028sep", "ünï", ""}
	pick := func() string { return odd[rng.IntN(len(odd))] + odd[rng.IntN(len(odd))] }
	for i := range 500 {
		sp := storedPoint{Kind: Kind(pick()), Dir: pick(), Prompt: pick(), CheckpointID: pick(),
			CreatedAt: stamp(time.Unix(rng.Int64N(2e9), rng.Int64N(1e9))), Bytes: rng.Int64N(3) * rng.Int64()}
		if i%7 != 0 {
			sp.Changes = map[string]*Entry{}
			for range rng.IntN(5) {
				var e *Entry
				if rng.IntN(4) != 0 {
					e = &Entry{Hash: pick(), Size: rng.Int64N(2) * rng.Int64(), Mode: rng.Uint32(), Link: pick(),
						Stored: rng.IntN(2) == 0, MTime: rng.Int64N(2) * rng.Int64()}
					if rng.IntN(2) == 0 {
						e.Data = []byte(pick())
					}
				}
				sp.Changes[pick()] = e
			}
		}
		for range rng.IntN(3) {
			sp.Notes = append(sp.Notes, pick())
		}
		want, err := json.Marshal(sp)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendPoint(nil, &sp); string(got) != string(want) {
			t.Fatalf("appendPoint:\n%s\njson.Marshal:\n%s", got, want)
		}
	}
}
