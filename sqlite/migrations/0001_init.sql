-- Threads: one row each. The lease_* columns describe the run holding the
-- thread (see Saver.Acquire); they are NULL when no run holds it.
CREATE TABLE threads (
	thread_id     TEXT PRIMARY KEY,
	metadata      BLOB,              -- JSON object or NULL
	status        TEXT NOT NULL,     -- idle | busy | interrupted | error
	created_at    INTEGER NOT NULL,  -- Unix nanoseconds
	updated_at    INTEGER NOT NULL,
	head          TEXT,              -- checkpoint_id of the latest Put
	lease_token   TEXT,
	lease_host    TEXT,
	lease_pid     INTEGER,
	lease_start   TEXT,
	lease_expires INTEGER            -- Unix nanoseconds
) WITHOUT ROWID;

CREATE INDEX threads_by_update ON threads (updated_at DESC, thread_id);

-- Checkpoints: one row per step. seq orders them by insertion, and is what
-- the per-checkpoint rows below refer to. msg_count is keep plus the number
-- of messages the checkpoint appended: the length of its state's messages.
CREATE TABLE checkpoints (
	seq           INTEGER PRIMARY KEY,
	thread_id     TEXT NOT NULL,
	checkpoint_id TEXT NOT NULL,
	parent_seq    INTEGER,           -- NULL for a root
	parent_id     TEXT,
	step          INTEGER NOT NULL,
	created_at    INTEGER NOT NULL,
	keep          INTEGER NOT NULL,
	msg_count     INTEGER NOT NULL,
	todos         BLOB,              -- JSON; NULL means unchanged
	meta          BLOB,              -- JSON or NULL
	UNIQUE (thread_id, checkpoint_id)
);

CREATE INDEX checkpoints_by_thread ON checkpoints (thread_id, seq);

-- The messages a checkpoint appended, at their positions in its state.
CREATE TABLE messages (
	cp_seq INTEGER NOT NULL,
	pos    INTEGER NOT NULL,
	data   BLOB NOT NULL,            -- JSON of an llm.Message
	PRIMARY KEY (cp_seq, pos)
) WITHOUT ROWID;

-- The files a checkpoint changed; NULL content means deleted.
CREATE TABLE files (
	cp_seq      INTEGER NOT NULL,
	path        TEXT NOT NULL,
	content     BLOB,
	created_at  INTEGER,             -- Unix nanoseconds; NULL for the zero time
	modified_at INTEGER,
	PRIMARY KEY (cp_seq, path)
) WITHOUT ROWID;

-- The custom state values a checkpoint changed; NULL data means deleted.
CREATE TABLE state_values (
	cp_seq INTEGER NOT NULL,
	key    TEXT NOT NULL,
	data   BLOB,
	PRIMARY KEY (cp_seq, key)
) WITHOUT ROWID;

-- The cross-thread store. namespace is the order-preserving encoding of
-- internal/nskey, so that prefixes are range scans.
CREATE TABLE store_items (
	namespace  BLOB NOT NULL,
	key        TEXT NOT NULL,
	value      BLOB NOT NULL,        -- JSON object
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	PRIMARY KEY (namespace, key)
) WITHOUT ROWID;
