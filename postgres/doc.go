// Package postgres keeps checkpoints ([checkpoint.Saver]) and a cross-thread
// store ([store.Store]) in a PostgreSQL schema, through a pgx connection
// pool, for many processes on many machines.
//
// The tables mirror the sqlite package's layout (a row per checkpoint, per
// appended message, per changed file or value), so a run of N steps stores
// O(N) bytes. A Put is a single statement (data-modifying CTEs), so it is
// atomic and takes one round trip; it returns after the server committed,
// which with the default synchronous_commit=on means the WAL reached disk.
// Load reads in one repeatable-read transaction, its queries sent as one
// batch.
//
// Threads are held by session-level advisory locks on dedicated
// connections; see [Saver.Acquire]. All tables live in one schema
// (Options.Schema, default "deepagents"), created and upgraded by embedded
// migrations recorded in a schema_version table; Open fails with
// checkpoint.ErrSchemaVersion when the schema is newer than this package.
//
// Tests read the server's URL from DEEPAGENTS_TEST_POSTGRES_URL and skip
// when it is unset; each test uses a fresh schema and drops it.
package postgres
