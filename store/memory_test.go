package store_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemoryStore() })
}

func TestMemoryZeroValue(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return new(store.MemoryStore) })
}
