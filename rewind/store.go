package rewind

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
	CreatedAt    time.Time         `json:"created_at"`
	Changes      map[string]*Entry `json:"changes"`
	Notes        []string          `json:"notes,omitempty"`
}

// blobItems are the store items of the changed entries' contents not
// stored yet, each once, and their hashes' (see hashesNamespace).
func (t *Tracker) blobItems(ctx context.Context, s *scanned, changes map[string]*Entry) ([]store.Item, error) {
	var items []store.Item
	seen := make(map[string]bool)
	for _, e := range changes {
		if e == nil || !e.Stored || seen[e.Hash] {
			continue
		}
		seen[e.Hash] = true
		data, ok := s.contents[e.Hash]
		if !ok {
			continue // unchanged content under a new mode: its blob is there
		}
		if _, err := t.cfg.Store.Get(ctx, hashesNamespace, e.Hash); err == nil {
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, fmt.Errorf("rewind: %w", err)
		}
		items = append(items,
			store.Item{Namespace: blobsNamespace, Key: e.Hash, Value: map[string]any{"data": base64.StdEncoding.EncodeToString(data)}},
			store.Item{Namespace: hashesNamespace, Key: e.Hash, Value: map[string]any{}})
	}
	return items, nil
}

// blob reads a stored content.
func (t *Tracker) blob(ctx context.Context, hash string) ([]byte, error) {
	it, err := t.cfg.Store.Get(ctx, blobsNamespace, hash)
	if err != nil {
		return nil, err
	}
	s, _ := it.Value["data"].(string)
	data, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", hash, err)
	}
	return data, nil
}

// pointItem is a point as a store item; its key orders the thread's
// points.
func pointItem(threadID string, p *Point) (store.Item, error) {
	v, err := toValue(storedPoint{Kind: p.Kind, Dir: p.Dir, Prompt: p.Prompt, CheckpointID: p.CheckpointID, CreatedAt: p.CreatedAt, Changes: p.Changes, Notes: p.Notes})
	return store.Item{Namespace: pointsOf(threadID), Key: pointKey(p.Seq), Value: v}, err
}

// pointKey is the key of a thread's seq-th point: numbers that sort.
func pointKey(seq int) string { return fmt.Sprintf("%010d", seq) }

func toValue(x any) (map[string]any, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	return v, json.Unmarshal(b, &v)
}

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
			b, _ := json.Marshal(it.Value)
			var sp storedPoint
			if err := json.Unmarshal(b, &sp); err != nil {
				return points, nil
			}
			points = append(points, &Point{Seq: seq, Kind: sp.Kind, Dir: sp.Dir, Prompt: sp.Prompt, CheckpointID: sp.CheckpointID, CreatedAt: sp.CreatedAt, Changes: sp.Changes, Notes: sp.Notes})
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
			changes, _ := it.Value["changes"].(map[string]any)
			for _, c := range changes {
				if e, ok := c.(map[string]any); ok {
					if h, ok := e["h"].(string); ok {
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
	for off := 0; ; off += pageSize {
		items, err := st.Search(ctx, hashesNamespace, store.SearchOptions{Limit: pageSize, Offset: off})
		if err != nil {
			return 0, fmt.Errorf("rewind: %w", err)
		}
		for _, it := range items {
			if !used[it.Key] {
				unused = append(unused, it.Key)
			}
		}
		if len(items) < pageSize {
			break
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
