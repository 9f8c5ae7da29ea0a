// Package checkpointtest is a conformance suite for [checkpoint.Saver]
// implementations. An implementation runs it in one line from a test:
//
//	func TestSaver(t *testing.T) {
//		checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
//			return mySaver(t) // a new, empty saver
//		})
//	}
//
// The suite covers saving and loading (latest and by ID), parent chains and
// conflicts, input validation, history and thread listings, deletion, time
// travel (branching from an old checkpoint), history rewrites (a Keep below
// the parent's message count), deletion of files and values, leases, the
// copying of inputs and outputs, cancelled contexts and a concurrency smoke
// test meant for -race. With [WithCorrupter] it also checks that damaged
// stored data loads as [checkpoint.ErrCorrupt] rather than a panic.
package checkpointtest
