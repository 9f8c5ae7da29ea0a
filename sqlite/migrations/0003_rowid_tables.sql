-- Messages and files become rowid tables with a unique index on their key.
-- As WITHOUT ROWID tables their rows (a tool result can be tens of KB) sat
-- in the key's b-tree: every insert read whole neighbouring rows, overflow
-- pages included, to compare keys, and split pages holding large rows.
-- A rowid table keeps the index small and appends the rows.
CREATE TABLE messages_v3 (
	cp_seq INTEGER NOT NULL,
	pos    INTEGER NOT NULL,
	data   BLOB NOT NULL             -- JSON of an llm.Message
);
INSERT INTO messages_v3 (cp_seq, pos, data) SELECT cp_seq, pos, data FROM messages ORDER BY cp_seq, pos;
DROP TABLE messages;
ALTER TABLE messages_v3 RENAME TO messages;
CREATE UNIQUE INDEX messages_by_checkpoint ON messages (cp_seq, pos);

CREATE TABLE files_v3 (
	cp_seq      INTEGER NOT NULL,
	path        TEXT NOT NULL,
	content     BLOB,                -- NULL means deleted
	created_at  INTEGER,             -- Unix nanoseconds; NULL for the zero time
	modified_at INTEGER,
	appended    INTEGER NOT NULL DEFAULT 0 -- 1: content is text added to the parent's file
);
INSERT INTO files_v3 (cp_seq, path, content, created_at, modified_at, appended)
	SELECT cp_seq, path, content, created_at, modified_at, appended FROM files ORDER BY cp_seq, path;
DROP TABLE files;
ALTER TABLE files_v3 RENAME TO files;
CREATE UNIQUE INDEX files_by_checkpoint ON files (cp_seq, path);
