// Package storetest is a conformance suite for [store.Store]
// implementations. An implementation runs it in one line from a test:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Store {
//			return myStore(t) // a new, empty store; close it in t.Cleanup
//		})
//	}
//
// The suite covers Get, Put and Delete; timestamps on overwrite; namespaces
// that a naive encoding would confuse; Search by namespace prefix with value
// filters, limits, offsets and ordering; ListNamespaces with prefix, depth,
// limit and offset; the JSON round trip of values (nested objects, numbers,
// unicode); refusal of values JSON cannot hold; the copying of values in and
// out; cancelled contexts; and a concurrency smoke test meant for -race.
package storetest
