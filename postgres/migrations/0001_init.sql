-- {{schema}} is replaced by the quoted schema name (Options.Schema).

-- Threads: one row each. lock_key is the advisory lock a run holds on the
-- thread (see Saver.Acquire); lease_token and lease_owner describe that run.
CREATE TABLE {{schema}}.threads (
	thread_id   text COLLATE "C" PRIMARY KEY,
	metadata    jsonb,
	status      text NOT NULL,      -- idle | busy | interrupted | error
	created_at  bigint NOT NULL,    -- Unix nanoseconds
	updated_at  bigint NOT NULL,
	head        text COLLATE "C",   -- checkpoint_id of the latest Put
	lock_key    bigint,
	lease_token text,
	lease_owner text
);

CREATE INDEX threads_by_update ON {{schema}}.threads (updated_at DESC, thread_id);

-- Checkpoints: one row per step; see the sqlite package for the layout.
CREATE TABLE {{schema}}.checkpoints (
	seq           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	thread_id     text COLLATE "C" NOT NULL,
	checkpoint_id text COLLATE "C" NOT NULL,
	parent_seq    bigint REFERENCES {{schema}}.checkpoints (seq) ON DELETE CASCADE,
	parent_id     text COLLATE "C",
	step          bigint NOT NULL,
	created_at    bigint NOT NULL,
	keep          integer NOT NULL,
	msg_count     integer NOT NULL,
	todos         bytea,            -- JSON; NULL means unchanged
	meta          bytea,
	UNIQUE (thread_id, checkpoint_id)
);

CREATE INDEX checkpoints_by_thread ON {{schema}}.checkpoints (thread_id, seq);
CREATE INDEX checkpoints_by_parent ON {{schema}}.checkpoints (parent_seq);

CREATE TABLE {{schema}}.messages (
	cp_seq bigint NOT NULL REFERENCES {{schema}}.checkpoints (seq) ON DELETE CASCADE,
	pos    integer NOT NULL,
	data   bytea NOT NULL,          -- JSON of an llm.Message
	PRIMARY KEY (cp_seq, pos)
);

CREATE TABLE {{schema}}.files (
	cp_seq      bigint NOT NULL REFERENCES {{schema}}.checkpoints (seq) ON DELETE CASCADE,
	path        text COLLATE "C" NOT NULL,
	content     bytea,              -- NULL: deleted
	created_at  bigint,             -- NULL: the zero time
	modified_at bigint,
	PRIMARY KEY (cp_seq, path)
);

CREATE TABLE {{schema}}.state_values (
	cp_seq bigint NOT NULL REFERENCES {{schema}}.checkpoints (seq) ON DELETE CASCADE,
	key    text COLLATE "C" NOT NULL,
	data   bytea,                   -- JSON; NULL: deleted
	PRIMARY KEY (cp_seq, key)
);

-- The cross-thread store; namespace is the internal/nskey encoding.
CREATE TABLE {{schema}}.store_items (
	namespace  bytea NOT NULL,
	key        text COLLATE "C" NOT NULL,
	value      jsonb NOT NULL,
	created_at bigint NOT NULL,
	updated_at bigint NOT NULL,
	PRIMARY KEY (namespace, key)
);
