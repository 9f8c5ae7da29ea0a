// Package sqlite keeps checkpoints ([checkpoint.Saver]) and a cross-thread
// store ([store.Store]) in one SQLite database file, with the pure-Go
// modernc.org/sqlite driver (no cgo).
//
// # Connections
//
// The database runs in WAL mode. All writes of a [DB] go through a single
// connection, so they are serialised in the process without lock
// contention, and each write transaction begins IMMEDIATE so that writers
// of other processes queue on SQLite's lock (up to Options.BusyTimeout)
// instead of failing on a lock upgrade. Reads use a separate pool of
// query-only connections and run in read transactions, so a Load sees one
// consistent snapshot while writes go on.
//
// # Layout and growth
//
// A checkpoint is a row in checkpoints (its parent, step, Keep, message
// count, meta; older versions also kept their plan in its todos column,
// which loads as a value, see checkpoint.LegacyTodosValue); each message
// it appended is a row of messages at its position in the state; each
// file or value it changed is a row of files or state_values, NULL
// meaning deleted. A run of N steps thus
// stores O(N) bytes. Load walks the ancestry with a recursive query; see
// [Saver].
//
// # Durability
//
// Put returns after its transaction committed. With the default
// synchronous=NORMAL, a committed transaction is in the WAL file (in the
// operating system's cache at least) before Put returns, so it survives the
// process being killed at any moment (kill -9, a panic, an OOM kill); after
// a power loss or kernel crash the last transactions may be missing, though
// the database stays consistent. Options.SyncFull (synchronous=FULL) fsyncs
// the WAL at each commit, making a returned Put survive power loss too, at
// the cost of one fsync per step.
//
// # Locking threads
//
// [Saver.Acquire] holds a thread with a lease row; see its documentation
// for how a dead holder is detected, at once on the same machine and after
// Options.LeaseTTL elsewhere.
//
// # Schema
//
// The schema is created and upgraded by embedded migrations, recorded in a
// schema_version table. Open fails with checkpoint.ErrSchemaVersion when the
// file was written by a newer version of this package.
package sqlite
