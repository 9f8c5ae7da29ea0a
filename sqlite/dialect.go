package sqlite

import (
	"time"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/sqlcore"
)

// dialect is SQLite's SQL for the operations the sqlite and postgres
// packages share (sqlcore).
var dialect = sqlcore.Dialect{
	Name:    "sqlite",
	Params:  "?",
	JSONIn:  "%s", // the JSON's bytes, in a BLOB
	JSONOut: "%s",
	NoLimit: -1,
	Wrap:    wrap,

	ChainInfo: chainCTE + `SELECT
		(SELECT parent_seq IS NULL FROM chain ORDER BY depth DESC LIMIT 1),
		(SELECT c.todos FROM chain ch JOIN checkpoints c ON c.seq = ch.seq WHERE c.todos IS NOT NULL ORDER BY ch.depth LIMIT 1),
		(SELECT ch.depth FROM chain ch JOIN checkpoints c ON c.seq = ch.seq WHERE c.todos IS NOT NULL ORDER BY ch.depth LIMIT 1)`,
	Messages: chainCTE + `SELECT m.pos, m.data FROM chain ch
		JOIN messages m ON m.cp_seq = ch.seq AND m.pos >= ch.keep AND m.pos < ch.lim ORDER BY m.pos`,
	Files: chainCTE + `, fr AS (
			SELECT f.path, f.content, f.created_at, f.modified_at, f.appended, ch.depth
			FROM chain ch JOIN files f ON f.cp_seq = ch.seq
		), base AS (SELECT path, min(depth) AS d FROM fr WHERE appended = 0 GROUP BY path)
		SELECT fr.path, fr.content IS NULL, fr.content, fr.created_at, fr.modified_at, fr.appended
		FROM fr LEFT JOIN base ON base.path = fr.path
		WHERE base.d IS NULL OR fr.depth <= base.d
		ORDER BY fr.path, fr.depth DESC`,
	// The bare columns of a min() aggregate come from the row of the
	// minimum: each key's newest row.
	Values: chainCTE + `SELECT v.key, v.data, min(ch.depth)
		FROM chain ch JOIN state_values v ON v.cp_seq = ch.seq GROUP BY v.key`,

	ListThreads: listThreads,
	GetThread: func(threadID string) (string, []any) {
		return `SELECT ` + threadCols + ` FROM threads WHERE thread_id = ?2`, []any{time.Now().UnixNano(), threadID}
	},
	DeleteThread: []string{
		`DELETE FROM messages WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE thread_id = ?)`,
		`DELETE FROM files WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE thread_id = ?)`,
		`DELETE FROM state_values WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE thread_id = ?)`,
		`DELETE FROM checkpoints WHERE thread_id = ?`,
		`DELETE FROM threads WHERE thread_id = ?`,
	},
}

// chainCTE walks the ancestry of checkpoint ?1 (a seq). lim is how many of
// a link's messages positions survive in the target's state: the smallest
// Keep among its descendants in the chain. Requiring c.seq < ch.seq makes
// the walk end even on corrupt data (a parent is always older).
const chainCTE = `WITH RECURSIVE chain (seq, parent_seq, keep, lim, depth) AS (
	SELECT seq, parent_seq, keep, msg_count, 0 FROM checkpoints WHERE seq = ?1
	UNION ALL
	SELECT c.seq, c.parent_seq, c.keep, min(ch.lim, ch.keep), ch.depth + 1
	FROM checkpoints c JOIN chain ch ON c.seq = ch.parent_seq AND c.seq < ch.seq
) `

// statusExpr is a thread's status as reported: a busy thread whose lease
// expired (its run died or hangs) reads as error. ?1 is the time now.
const statusExpr = `CASE WHEN status = 'busy' AND (lease_expires IS NULL OR lease_expires < ?1) THEN 'error' ELSE status END`

const threadCols = `thread_id, metadata, ` + statusExpr + `, created_at, updated_at, head`

func listThreads(opts checkpoint.ListOptions, limit any, offset int) (string, []any) {
	q := `SELECT ` + threadCols + ` FROM threads WHERE 1`
	if opts.Status != "" {
		q += ` AND ` + statusExpr + ` = ?2`
	}
	if opts.TopLevel {
		q += ` AND instr(thread_id, '/') = 0` // not thread.IsChild
	}
	q += ` ORDER BY updated_at DESC, thread_id LIMIT ?3 OFFSET ?4`
	return q, []any{time.Now().UnixNano(), string(opts.Status), limit, offset}
}
