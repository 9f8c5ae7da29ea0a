package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/postgres"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/server/a2aserve"
	"github.com/deepagents-go/deepagents/server/mcpserve"
	"github.com/deepagents-go/deepagents/sqlite"
	"github.com/deepagents-go/deepagents/store"
	"github.com/jackc/pgx/v5"
)

// sdkDir holds the official JavaScript SDK, pinned by its package-lock.json
// (.ci/run installs it with npm ci), and the script that drives it.
const sdkDir = "testdata/sdk"

// TestOfficialJSSDK runs the official LangGraph JavaScript SDK, versions
// 1.0.3 (which the Deep Agents UI pins) and 1.15.0, against a server on a
// SQLite database: streaming with todos and files, an approval and its
// resume (approve, edit, reject), history, thread search, a joined and
// rejoined stream (Last-Event-ID), a refused second run, and cancel. With
// DEEPAGENTS_TEST_POSTGRES_URL (as in CI) it runs against two replicas on
// PostgreSQL instead, and also joins and cancels through the second a run
// started through the first.
func TestOfficialJSSDK(t *testing.T) {
	node := sdkNode(t)
	pg := os.Getenv("DEEPAGENTS_TEST_POSTGRES_URL")
	for _, version := range []string{"1.0.3", "1.15.0"} {
		t.Run(version, func(t *testing.T) {
			db := sdkDB(t)
			url, _ := sdkServer(t, db.Saver(), db.Store())
			args := []string{"sdk.mjs", url, version}
			if pg != "" {
				// Two replicas on PostgreSQL: the SDK creates a run through
				// one and joins and cancels it through the other.
				a, b := pgReplicas(t, pg)
				args = []string{"sdk.mjs", a, version, b}
			}
			runSDK(t, node, args...)
		})
	}
}

// sdkNode returns node's path, once the SDK is installed; without them
// the test is skipped (failed in CI).
func sdkNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(sdkDir, "node_modules")); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the SDK is missing in CI (node: %v; %s/node_modules: %v)", err, sdkDir, serr)
		}
		t.Skipf("needs node and the SDK: cd server/%s && npm ci", sdkDir)
	}
	return node
}

// sdkDB is a SQLite database of the test's own, closed after it.
func sdkDB(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "threads.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// runSDK runs a script of sdkDir with node, within two minutes, and fails
// the test with its output when the script's checks fail.
func runSDK(t *testing.T, node string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir = sdkDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the SDK's checks failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// pgReplicas starts two servers on one PostgreSQL database (a fresh
// schema) and returns their URLs; set changes their configuration.
func pgReplicas(t *testing.T, pgURL string, set ...func(*server.Config)) (string, string) {
	t.Helper()
	ctx := context.Background()
	var b [6]byte
	rand.Read(b[:])
	schema := "test_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		if conn, err := pgx.Connect(ctx, pgURL); err == nil {
			conn.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
			conn.Close(ctx)
		}
	})
	db, err := postgres.Open(ctx, pgURL, &postgres.Options{Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	first, _ := sdkServer(t, db.Saver(), db.Store(), set...)
	second, _ := sdkServer(t, db.Saver(), db.Store(), set...)
	return first, second
}

// sdkServer serves, until the test ends, an agent on replay:inline (each
// thread's last message its script) that asks before write_file, on saver
// and st (the store replicas share); set changes the server's
// configuration. It returns the server's URL, and the server.
func sdkServer(t *testing.T, saver checkpoint.Saver, st store.Store, set ...func(*server.Config)) (string, *server.Server) {
	t.Helper()
	a, err := deepagents.New(deepagents.Config{
		Model:        replay.Inline{},
		Checkpointer: saver,
		InterruptOn:  map[string]deepagents.InterruptOn{"write_file": {}},
	})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(nil)
	url := "http://" + hs.Listener.Addr().String()
	cfg := server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver, Store: st, URL: url}
	for _, f := range set {
		f(&cfg)
	}
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs.Config.Handler = s
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		s.Close()
		hs.Close()
	})
	return url, s
}

// TestOfficialA2AClient drives the A2A endpoints with the official A2A
// JavaScript client (@a2a-js/sdk 0.3.14, testdata/sdk/a2a.mjs), with the
// server's key: the card, message/send, message/stream, tasks/get, an
// input-required round trip, tasks/cancel and tasks/resubscribe (whose
// streams carry keep-alives while the task is silent). On a
// SQLite database; with DEEPAGENTS_TEST_POSTGRES_URL (as in CI) on two
// replicas on PostgreSQL, through which it also reads, answers and cancels
// a task started through the other.
func TestOfficialA2AClient(t *testing.T) {
	node := sdkNode(t)
	const key = "a2a-key"
	if pg := os.Getenv("DEEPAGENTS_TEST_POSTGRES_URL"); pg != "" {
		a, b := pgReplicas(t, pg, func(c *server.Config) {
			c.APIKey, c.Heartbeat, c.Protocols = key, 50*time.Millisecond, []server.Protocol{a2aserve.Protocol{}}
		})
		runSDK(t, node, "a2a.mjs", a, key, b)
		return
	}
	db := sdkDB(t)
	// Short heartbeats: the streams of the slow tasks carry keep-alives.
	u, _ := sdkServer(t, db.Saver(), db.Store(), func(c *server.Config) {
		c.APIKey, c.Heartbeat, c.Protocols = key, 50*time.Millisecond, []server.Protocol{a2aserve.Protocol{}}
	})
	runSDK(t, node, "a2a.mjs", u, key)
}

// TestOfficialMCPSDK runs the official MCP TypeScript SDK (1.32.2, with
// StreamableHTTPClientTransport, the API key as a header) against /mcp of
// a server on a SQLite database (testdata/sdk/mcp.mjs): listTools, a task
// to its answer with progress, an approval round trip, and a closed client
// cancelling its call's run. With DEEPAGENTS_TEST_POSTGRES_URL it also runs
// against two replicas on PostgreSQL, the approval's decision sent to the
// other one.
func TestOfficialMCPSDK(t *testing.T) {
	node := sdkNode(t)
	t.Run("sqlite", func(t *testing.T) {
		db := sdkDB(t)
		url, _ := sdkServer(t, db.Saver(), db.Store(), func(c *server.Config) {
			c.APIKey, c.Protocols = "mcp-key", []server.Protocol{mcpserve.Protocol{}}
		})
		runSDK(t, node, "mcp.mjs", url, "mcp-key")
	})
	if pg := os.Getenv("DEEPAGENTS_TEST_POSTGRES_URL"); pg != "" {
		t.Run("postgres replicas", func(t *testing.T) {
			a, b := pgReplicas(t, pg, func(c *server.Config) { c.Protocols = []server.Protocol{mcpserve.Protocol{}} })
			runSDK(t, node, "mcp.mjs", a, "", b)
		})
	}
}

// TestOfficialJSSDKTimeTravel runs testdata/sdk/timetravel.mjs with both
// SDK versions against a server on a SQLite database: getHistory paging
// with limit and before through a thread of more than 10 checkpoints,
// runs from an earlier checkpoint (checkpointId, checkpoint) whose results
// build on it while the abandoned branch stays loadable, and a state update
// that forks.
func TestOfficialJSSDKTimeTravel(t *testing.T) {
	node := sdkNode(t)
	for _, version := range []string{"1.0.3", "1.15.0"} {
		t.Run(version, func(t *testing.T) {
			db := sdkDB(t)
			url, _ := sdkServer(t, db.Saver(), db.Store())
			runSDK(t, node, "timetravel.mjs", url, version)
		})
	}
}

// TestOfficialJSSDKStoreAndCrons runs the official JavaScript SDK's store
// and crons clients (storecrons.mjs) against a server on a SQLite database
// whose cron scheduler the test ticks, a minute at a time.
func TestOfficialJSSDKStoreAndCrons(t *testing.T) {
	node := sdkNode(t)
	for _, version := range []string{"1.0.3", "1.15.0"} {
		t.Run(version, func(t *testing.T) {
			db := sdkDB(t)
			u, s := sdkServer(t, db.Saver(), db.Store())
			clk := &clock{t: t0}
			s.SetCronClock(clk.now)
			tctx, stop := context.WithCancel(context.Background())
			ticked := make(chan struct{})
			go func() {
				defer close(ticked)
				for i := 1; tctx.Err() == nil; i++ {
					time.Sleep(50 * time.Millisecond)
					clk.set(t0.Add(time.Duration(i) * time.Minute))
					s.CronTick(tctx)
				}
			}()
			defer func() {
				stop()
				<-ticked
			}()
			runSDK(t, node, "storecrons.mjs", u, version)
		})
	}
}

// TestOfficialJSSDKBackgroundApproval runs testdata/sdk/bgapproval.mjs
// with both SDK versions against a server on a SQLite database whose
// agent has a background subagent, writer, that asks before write_file:
// the SDK sees the parked task's request on the parent thread
// (threads.get, threads.getState, threads.search) and answers it with
// runs.wait and command.resume.
func TestOfficialJSSDKBackgroundApproval(t *testing.T) {
	node := sdkNode(t)
	for _, version := range []string{"1.0.3", "1.15.0"} {
		t.Run(version, func(t *testing.T) {
			runSDK(t, node, "bgapproval.mjs", bgSDKServer(t, server.Config{}), version)
		})
	}
}

// TestOfficialA2AClientBackgroundApproval runs testdata/sdk/a2abg.mjs:
// a background subagent's request for approval through the official A2A
// JavaScript client, input-required on the context's task, answered
// there, collected by the context's next task.
func TestOfficialA2AClientBackgroundApproval(t *testing.T) {
	node := sdkNode(t)
	const key = "a2a-key"
	runSDK(t, node, "a2abg.mjs", bgSDKServer(t, server.Config{APIKey: key, Protocols: []server.Protocol{a2aserve.Protocol{}}}), key)
}

// bgSDKServer serves, with cfg, a deep agent on replay:inline over a
// SQLite database, with a background subagent, writer, that asks before
// write_file; its tasks are task-1, task-2, ... It returns the URL.
func bgSDKServer(t *testing.T, cfg server.Config) string {
	t.Helper()
	db := sdkDB(t)
	var n atomic.Int64
	a, err := deepagents.New(deepagents.Config{
		Model:        replay.Inline{},
		Checkpointer: db.Saver(),
		AsyncSubagents: []deepagents.AsyncSubagent{{Subagent: deepagents.Subagent{
			Name: "writer", Description: "Writes notes in the background.",
			InterruptOn: map[string]deepagents.InterruptOn{"write_file": {}},
		}}},
		Async: deepagents.AsyncOptions{NewTaskID: func() string { return fmt.Sprintf("task-%d", n.Add(1)) }},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	cfg.Assistants, cfg.Saver = []server.Assistant{{GraphID: "deepagent", Agent: a}}, db.Saver()
	s, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		s.Close()
		hs.Close()
	})
	return hs.URL
}
