package postgres

import "strings"

// queries holds the SQL text of a DB, with its schema filled in.
type queries struct {
	put, putWhy                           string
	chainInfo, msgs, files, values        string
	threads, threadsByStatus, thread      string
	deleteThread                          string
	lockThread, leaseOwner, acquireUpsert string
	release, releaseToken, unlock         string
}

func buildQueries(q string) queries {
	r := strings.NewReplacer("S.", q+".")
	s := func(x string) string { return r.Replace(x) }
	// chain walks the ancestry of the checkpoint with seq $1; see the sqlite
	// package for the meaning of lim. The LATERAL subqueries (kept apart by
	// LIMIT and OFFSET 0) make each step an index lookup: the planner cannot
	// know a recursive query runs once per ancestor and would otherwise
	// scan the whole table at each step.
	chain := `WITH RECURSIVE chain (seq, parent_seq, keep, lim, depth) AS (
		SELECT seq, parent_seq, keep, msg_count, 0 FROM S.checkpoints WHERE seq = $1
		UNION ALL
		SELECT c.seq, c.parent_seq, c.keep, least(ch.lim, ch.keep), ch.depth + 1
		FROM chain ch CROSS JOIN LATERAL (
			SELECT seq, parent_seq, keep FROM S.checkpoints WHERE seq = ch.parent_seq AND seq < ch.seq LIMIT 1
		) c
	) `
	// status is a thread's status as reported: a busy thread whose run no
	// longer holds the advisory lock (the process died) reads as error.
	status := `CASE WHEN t.status = 'busy' AND NOT EXISTS (SELECT 1 FROM held WHERE held.key = t.lock_key)
		THEN 'error' ELSE t.status END`
	held := `WITH held AS MATERIALIZED (
		SELECT (classid::bigint << 32) | objid::bigint AS key FROM pg_locks
		WHERE locktype = 'advisory' AND objsubid = 1 AND granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
	) `
	threadCols := `t.thread_id, t.metadata::text, ` + status + ` AS eff_status, t.created_at, t.updated_at, t.head`
	return queries{
		// One statement, one implicit transaction: insert the checkpoint
		// if its parent exists and holds Keep messages and its ID is new,
		// then its rows, then move the thread's head. No row back means
		// refused; putWhy tells why.
		put: s(`WITH parent AS (
				SELECT seq, msg_count FROM S.checkpoints WHERE thread_id = $1 AND checkpoint_id = $3
			), cp AS (
				INSERT INTO S.checkpoints (thread_id, checkpoint_id, parent_seq, parent_id, step, created_at, keep, msg_count, todos, meta)
				SELECT $1, $2, (SELECT seq FROM parent), $3, $4, $5, $6, $7, $8, $9
				WHERE ($3::text IS NULL AND $6 = 0) OR EXISTS (SELECT 1 FROM parent WHERE msg_count >= $6)
				ON CONFLICT (thread_id, checkpoint_id) DO NOTHING
				RETURNING seq
			), msgs AS (
				INSERT INTO S.messages (cp_seq, pos, data)
				SELECT cp.seq, $6 + m.ord - 1, m.data FROM cp, unnest($10::bytea[]) WITH ORDINALITY AS m (data, ord)
			), fls AS (
				INSERT INTO S.files (cp_seq, path, content, created_at, modified_at, appended)
				SELECT cp.seq, f.path, f.content, f.c, f.m, f.a FROM cp, unnest($11::text[], $12::bytea[], $13::bigint[], $14::bigint[], $18::boolean[]) AS f (path, content, c, m, a)
			), vals AS (
				INSERT INTO S.state_values (cp_seq, key, data)
				SELECT cp.seq, v.key, v.data FROM cp, unnest($15::text[], $16::bytea[]) AS v (key, data)
			), th AS (
				INSERT INTO S.threads (thread_id, status, created_at, updated_at, head)
				SELECT $1, 'idle', $17, $17, $2 FROM cp
				ON CONFLICT (thread_id) DO UPDATE SET updated_at = excluded.updated_at, head = excluded.head
			)
			SELECT seq FROM cp`),
		putWhy: s(`SELECT
				(SELECT msg_count FROM S.checkpoints WHERE thread_id = $1 AND checkpoint_id = $3),
				EXISTS (SELECT 1 FROM S.checkpoints WHERE thread_id = $1 AND checkpoint_id = $2)`),
		chainInfo: s(chain + `SELECT
				coalesce((SELECT parent_seq IS NULL FROM chain ORDER BY depth DESC LIMIT 1), false),
				(SELECT c.todos FROM chain ch JOIN S.checkpoints c ON c.seq = ch.seq WHERE c.todos IS NOT NULL ORDER BY ch.depth LIMIT 1),
				(SELECT ch.depth FROM chain ch JOIN S.checkpoints c ON c.seq = ch.seq WHERE c.todos IS NOT NULL ORDER BY ch.depth LIMIT 1)`),
		msgs: s(chain + `SELECT m.pos, m.data FROM chain ch CROSS JOIN LATERAL (
					SELECT pos, data FROM S.messages WHERE cp_seq = ch.seq AND pos >= ch.keep AND pos < ch.lim OFFSET 0
				) m ORDER BY m.pos`),
		// files: for each path, its newest rewrite or deletion in the chain
		// and the appends after it, oldest first.
		files: s(chain + `, fr AS MATERIALIZED (
					SELECT f.path, f.content, f.created_at, f.modified_at, f.appended, ch.depth
					FROM chain ch CROSS JOIN LATERAL (SELECT * FROM S.files WHERE cp_seq = ch.seq OFFSET 0) f
				), base AS (SELECT path, min(depth) AS d FROM fr WHERE NOT appended GROUP BY path)
				SELECT fr.path, fr.content IS NULL, fr.content, fr.created_at, fr.modified_at, fr.appended
				FROM fr LEFT JOIN base USING (path)
				WHERE base.d IS NULL OR fr.depth <= base.d
				ORDER BY fr.path, fr.depth DESC`),
		values: s(chain + `SELECT DISTINCT ON (v.key) v.key, v.data, ch.depth
				FROM chain ch CROSS JOIN LATERAL (SELECT * FROM S.state_values WHERE cp_seq = ch.seq OFFSET 0) v
				ORDER BY v.key, ch.depth`),
		// $3: leave out child threads (thread.IsChild: an id with '/').
		threads: s(held + `SELECT ` + threadCols + ` FROM S.threads t WHERE NOT ($3 AND strpos(t.thread_id, '/') > 0)
				ORDER BY t.updated_at DESC, t.thread_id LIMIT $1 OFFSET $2`),
		threadsByStatus: s(held + `SELECT * FROM (SELECT ` + threadCols + ` FROM S.threads t WHERE NOT ($3 AND strpos(t.thread_id, '/') > 0)) x
				WHERE eff_status = $4 ORDER BY updated_at DESC, thread_id LIMIT $1 OFFSET $2`),
		thread: s(held + `SELECT ` + threadCols + ` FROM S.threads t WHERE t.thread_id = $1`),
		deleteThread: s(`WITH cps AS (DELETE FROM S.checkpoints WHERE thread_id = $1)
				DELETE FROM S.threads WHERE thread_id = $1`),
		lockThread: `SELECT pg_try_advisory_lock($1), set_config('tcp_keepalives_idle', '10', false),
				set_config('tcp_keepalives_interval', '5', false), set_config('tcp_keepalives_count', '3', false)`,
		leaseOwner: s(`SELECT lease_owner FROM S.threads WHERE thread_id = $1`),
		acquireUpsert: s(`INSERT INTO S.threads (thread_id, metadata, status, created_at, updated_at, lock_key, lease_token, lease_owner)
				VALUES ($1, $2::text::jsonb, 'busy', $3, $3, $4, $5, $6)
				ON CONFLICT (thread_id) DO UPDATE SET status = 'busy', updated_at = excluded.updated_at,
					lock_key = excluded.lock_key, lease_token = excluded.lease_token, lease_owner = excluded.lease_owner`),
		release: s(`UPDATE S.threads SET status = $2, updated_at = $3, lease_token = NULL, lease_owner = NULL
				WHERE thread_id = $1 AND lease_token = $4`),
		releaseToken: s(`SELECT lease_token FROM S.threads WHERE thread_id = $1`),
		unlock:       `SELECT pg_advisory_unlock($1)`,
	}
}
