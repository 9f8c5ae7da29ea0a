package sqlite

import (
	"fmt"
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint/checkpointtest"
	"github.com/deepagents-go/deepagents/store/storetest"
)

// BenchmarkPut measures one step's checkpoint (two messages, ~800 bytes)
// on a growing thread, with and without SyncFull.
func BenchmarkPut(b *testing.B) {
	for _, full := range []bool{false, true} {
		b.Run(fmt.Sprintf("SyncFull=%v", full), func(b *testing.B) {
			checkpointtest.BenchmarkPut(b, openTemp(b, &Options{SyncFull: full}).Saver())
		})
	}
}

// BenchmarkLoad measures loading the head of a 1,000-step thread (2,000
// messages).
func BenchmarkLoad(b *testing.B) { checkpointtest.BenchmarkLoad(b, openTemp(b, nil).Saver()) }

// BenchmarkStore measures a store item's Put, Get and a Search of its
// namespace among 100 items.
func BenchmarkStore(b *testing.B) { storetest.BenchmarkStore(b, openTemp(b, nil).Store()) }
