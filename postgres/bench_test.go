package postgres

import (
	"testing"

	"github.com/deepagents-go/deepagents/checkpoint/checkpointtest"
	"github.com/deepagents-go/deepagents/store/storetest"
)

// BenchmarkPut measures one step's checkpoint (two messages, ~800 bytes)
// on a growing thread.
func BenchmarkPut(b *testing.B) { checkpointtest.BenchmarkPut(b, openTemp(b, nil).Saver()) }

// BenchmarkLoad measures loading the head of a 1,000-step thread (2,000
// messages).
func BenchmarkLoad(b *testing.B) { checkpointtest.BenchmarkLoad(b, openTemp(b, nil).Saver()) }

// BenchmarkStore measures a store item's Put, Get and a Search of its
// namespace among 100 items.
func BenchmarkStore(b *testing.B) { storetest.BenchmarkStore(b, openTemp(b, nil).Store()) }
