package rewind

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/deepagents-go/deepagents/store"
)

// Where a store keeps the blobs, and each thread's points.
var (
	blobsNamespace = []string{"deepagents", "rewind", "blobs"}
	// hashesNamespace lists the blobs, by an empty item each: Vacuum
	// reads it rather than every blob's content.
	hashesNamespace = []string{"deepagents", "rewind", "hashes"}
	pointsNamespace = []string{"deepagents", "rewind", "points"}
)

func pointsOf(threadID string) []string { return append(pointsNamespace[:3:3], threadID) }

// storedPoint is a Point as the store keeps it.
type storedPoint struct {
	Kind         Kind              `json:"kind"`
	Dir          string            `json:"dir,omitempty"`
	Prompt       string            `json:"prompt,omitempty"`
	CheckpointID string            `json:"checkpoint_id,omitempty"`
	CreatedAt    stamp             `json:"created_at"`
	Changes      map[string]*Entry `json:"changes"`
	Notes        []string          `json:"notes,omitempty"`
	Bytes        int64             `json:"bytes,omitempty"`
}

// chunkBytes is the most content one blob holds: a larger file is stored
// as chunks of it, each a blob (shared by the files that have it), and a
// list of them under the file's hash.
const chunkBytes = 1 << 20

// stamp is a point's time as its record keeps it: RFC 3339 with all nine
// digits of the nanoseconds, so that the records of points alike have one
// width.
type stamp time.Time

const stampLayout = "2006-01-02T15:04:05.000000000Z07:00"

func (s stamp) String() string { return time.Time(s).UTC().Format(stampLayout) }

// MarshalJSON implements json.Marshaler.
func (s stamp) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// UnmarshalJSON implements json.Unmarshaler: any RFC 3339 time.
func (s *stamp) UnmarshalJSON(b []byte) error {
	var t time.Time
	err := json.Unmarshal(b, &t)
	*s = stamp(t)
	return err
}

// blobItems are the store items of the changed entries' contents not
// stored yet, each once, and their hashes' (see hashesNamespace), with
// the bytes of content they add. A content that would take the thread
// past MaxThreadBytes is not stored: its entries say so (Stored false),
// and a note names them.
func (t *Tracker) blobItems(ctx context.Context, ts *threadState, s *scanned, changes map[string]*Entry) (items []store.Item, bytes int64, notes []string, err error) {
	decided := make(map[string]bool) // hash -> stored
	for _, p := range slices.Sorted(maps.Keys(changes)) {
		e := changes[p]
		if e == nil || !e.Stored {
			continue
		}
		if stored, ok := decided[e.Hash]; ok {
			e.Stored = stored
			continue
		}
		data, ok := s.contents[e.Hash]
		if !ok {
			decided[e.Hash] = true // unchanged content under a new mode or path: its blob is there
			continue
		}
		if _, err := t.cfg.Store.Get(ctx, hashesNamespace, e.Hash); err == nil {
			decided[e.Hash] = true
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, 0, nil, fmt.Errorf("rewind: %w", err)
		}
		if ts.bytes+bytes+int64(len(data)) > t.cfg.MaxThreadBytes {
			e.Stored, decided[e.Hash] = false, false
			notes = append(notes, fmt.Sprintf("%s (%d bytes): the thread's stored contents would pass %d MiB: recorded by its hash, not restorable", p, len(data), t.cfg.MaxThreadBytes>>20))
			continue
		}
		decided[e.Hash] = true
		items = append(items, contentItems(e.Hash, data)...)
		bytes += int64(len(data))
	}
	return items, bytes, notes, nil
}

// contentItems are the items that store data under hash: one blob, or
// chunks and their list.
func contentItems(hash string, data []byte) []store.Item {
	blob := func(h string, v map[string]any, listed map[string]any) []store.Item {
		return []store.Item{{Namespace: blobsNamespace, Key: h, Value: v}, {Namespace: hashesNamespace, Key: h, Value: listed}}
	}
	if len(data) <= chunkBytes {
		return blob(hash, map[string]any{"data": base64.StdEncoding.EncodeToString(data)}, map[string]any{})
	}
	var items []store.Item
	var chunks []any
	seen := make(map[string]bool)
	for off := 0; off < len(data); off += chunkBytes {
		c := data[off:min(off+chunkBytes, len(data))]
		sum := sha256.Sum256(c)
		h := hex.EncodeToString(sum[:])
		chunks = append(chunks, h)
		if !seen[h] {
			seen[h] = true
			items = append(items, blob(h, map[string]any{"data": base64.StdEncoding.EncodeToString(c)}, map[string]any{})...)
		}
	}
	// The list in the hashes' item too: Vacuum keeps a used file's chunks
	// without reading its blob.
	return append(items, blob(hash, map[string]any{"chunks": chunks}, map[string]any{"chunks": chunks})...)
}

// storedContents marks, once a point is in the store, the index's files
// whose contents it stored, and those it recorded by hash alone.
func (t *Tracker) storedContents(changes map[string]*Entry) {
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	for p, e := range changes {
		if k, ok := t.idx.files[p]; ok && e != nil && k.hash == e.Hash {
			k.stored, k.refused = e.Stored, !e.Stored
			t.idx.files[p] = k
		}
	}
}

// forgetContents drops from the index the files of a point that could
// not be stored: the next scan reads them again.
func (t *Tracker) forgetContents(changes map[string]*Entry) {
	t.idx.mu.Lock()
	defer t.idx.mu.Unlock()
	for p := range changes {
		delete(t.idx.files, p)
	}
}

// contentBytes are the bytes of the content items' values as JSON, as the
// stores keep them: {"data":"..."}, {} and the lists of chunks.
func contentBytes(items []store.Item) int64 {
	var n int64
	for _, it := range items {
		switch v := it.Value; {
		case len(v) == 0:
			n += 2
		case v["data"] != nil:
			n += int64(len(`{"data":""}`) + len(v["data"].(string)))
		default:
			b, _ := json.Marshal(v)
			n += int64(len(b))
		}
	}
	return n
}

// blob reads a stored content, whole, and checks it against its hash.
func (t *Tracker) blob(ctx context.Context, hash string) ([]byte, error) {
	it, err := t.cfg.Store.Get(ctx, blobsNamespace, hash)
	if err != nil {
		return nil, err
	}
	var data []byte
	if chunks, ok := it.Value["chunks"].([]any); ok {
		for _, c := range chunks {
			h, _ := c.(string)
			part, err := t.blob(ctx, h)
			if err != nil {
				return nil, fmt.Errorf("blob %s: chunk %s: %w", hash, h, err)
			}
			data = append(data, part...)
		}
	} else {
		s, _ := it.Value["data"].(string)
		if data, err = base64.StdEncoding.DecodeString(s); err != nil {
			return nil, fmt.Errorf("blob %s: %w", hash, err)
		}
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		return nil, fmt.Errorf("blob %s: its content does not have that hash", hash)
	}
	return data, nil
}

// pointItem is a point as a store item (its key orders the thread's
// points), with the bytes of its value. The value holds the point's JSON
// as one string: a store copies, encodes and keeps a string at a fraction
// of what the same record as nested objects costs it, at every step.
func pointItem(threadID string, p *Point) (store.Item, int64) {
	b := appendPoint(nil, &storedPoint{Kind: p.Kind, Dir: p.Dir, Prompt: p.Prompt, CheckpointID: p.CheckpointID, CreatedAt: stamp(p.CreatedAt), Changes: p.Changes, Notes: p.Notes, Bytes: p.Bytes})
	return store.Item{Namespace: pointsOf(threadID), Key: pointKey(p.Seq), Value: map[string]any{"point": string(b)}}, int64(len(b))
}

// decodePoint reads a point's stored value: its JSON as a string, or, as
// points were stored before, its fields as the value's.
func decodePoint(v map[string]any) (storedPoint, error) {
	var sp storedPoint
	b, ok := v["point"].(string)
	if !ok {
		old, err := json.Marshal(v)
		if err != nil {
			return sp, err
		}
		b = string(old)
	}
	return sp, json.Unmarshal([]byte(b), &sp)
}

// pointKey is the key of a thread's seq-th point: numbers that sort.
func pointKey(seq int) string { return fmt.Sprintf("%010d", seq) }

// pageSize is how many points a read of the store takes.
const pageSize = 500

// loadPoints reads a thread's points, in order. A point that does not
// decode ends the list there: the points after it build on it.
func (t *Tracker) loadPoints(ctx context.Context, threadID string) ([]*Point, error) {
	var points []*Point
	for off := 0; ; off += pageSize {
		items, err := t.cfg.Store.Search(ctx, pointsOf(threadID), store.SearchOptions{Limit: pageSize, Offset: off})
		if err != nil {
			return nil, fmt.Errorf("rewind: reading the points of %s: %w", threadID, err)
		}
		for _, it := range items {
			if len(it.Namespace) != 4 {
				continue // a thread whose ID extends this one's
			}
			seq, err := strconv.Atoi(it.Key)
			if err != nil || seq != len(points)+1 {
				return points, nil
			}
			sp, err := decodePoint(it.Value)
			if err != nil {
				return points, nil
			}
			points = append(points, &Point{Seq: seq, Kind: sp.Kind, Dir: sp.Dir, Prompt: sp.Prompt, CheckpointID: sp.CheckpointID, CreatedAt: time.Time(sp.CreatedAt), Changes: sp.Changes, Notes: sp.Notes, Bytes: sp.Bytes})
		}
		if len(items) < pageSize {
			return points, nil
		}
	}
}

// Forget removes a thread's points from st, the newest first (a Forget
// cut short leaves a shorter list of points, still whole); the blobs stay
// until Vacuum.
func Forget(ctx context.Context, st store.Store, threadID string) error {
	var keys []string
	for off := 0; ; off += pageSize {
		items, err := st.Search(ctx, pointsOf(threadID), store.SearchOptions{Limit: pageSize, Offset: off})
		if err != nil {
			return fmt.Errorf("rewind: %w", err)
		}
		for _, it := range items {
			if len(it.Namespace) == 4 {
				keys = append(keys, it.Key)
			}
		}
		if len(items) < pageSize {
			break
		}
	}
	for i := len(keys) - 1; i >= 0; i-- {
		if err := st.Delete(ctx, pointsOf(threadID), keys[i]); err != nil {
			return fmt.Errorf("rewind: %w", err)
		}
	}
	return nil
}

// Vacuum removes the blobs no point of any thread refers to, and returns
// how many it removed. Run it when no agent records points: a blob stored
// for a point not yet written is not referred to.
func Vacuum(ctx context.Context, st store.Store) (int, error) {
	used := make(map[string]bool)
	for off := 0; ; off += pageSize {
		items, err := st.Search(ctx, pointsNamespace, store.SearchOptions{Limit: pageSize, Offset: off})
		if err != nil {
			return 0, fmt.Errorf("rewind: %w", err)
		}
		for _, it := range items {
			sp, err := decodePoint(it.Value)
			if err != nil {
				continue // unreadable: no thread can restore from it either
			}
			for _, e := range sp.Changes {
				if e != nil && e.Hash != "" {
					used[e.Hash] = true
				}
			}
		}
		if len(items) < pageSize {
			break
		}
	}
	var all []string
	for off := 0; ; off += pageSize {
		items, err := st.Search(ctx, hashesNamespace, store.SearchOptions{Limit: pageSize, Offset: off})
		if err != nil {
			return 0, fmt.Errorf("rewind: %w", err)
		}
		for _, it := range items {
			all = append(all, it.Key)
			// A used file stored in chunks uses them.
			if chunks, ok := it.Value["chunks"].([]any); ok && used[it.Key] {
				for _, c := range chunks {
					if h, ok := c.(string); ok {
						used[h] = true
					}
				}
			}
		}
		if len(items) < pageSize {
			break
		}
	}
	var unused []string
	for _, h := range all {
		if !used[h] {
			unused = append(unused, h)
		}
	}
	for _, h := range unused {
		if err := st.Delete(ctx, blobsNamespace, h); err != nil {
			return 0, fmt.Errorf("rewind: %w", err)
		}
		if err := st.Delete(ctx, hashesNamespace, h); err != nil {
			return 0, fmt.Errorf("rewind: %w", err)
		}
	}
	return len(unused), nil
}

// FolderOf returns the folder a thread's points were recorded in ("" for
// a thread whose files are in its state, or that has no points): what a
// Tracker to rewind it is opened on.
func FolderOf(ctx context.Context, st store.Store, threadID string) (string, error) {
	t := &Tracker{cfg: Config{Store: st}}
	points, err := t.loadPoints(ctx, threadID)
	if err != nil || len(points) == 0 {
		return "", err
	}
	return points[len(points)-1].Dir, nil
}
