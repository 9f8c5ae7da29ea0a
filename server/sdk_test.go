package server_test

import (
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
	"github.com/deepagents-go/deepagents/sqlite"
)

// sdkDir holds the official JavaScript SDK, pinned by its package-lock.json
// (.ci/run installs it with npm ci), and the script that drives it.
const sdkDir = "testdata/sdk"

// TestOfficialJSSDK runs the official LangGraph JavaScript SDK, versions
// 1.0.3 (which the Deep Agents UI pins) and 1.15.0, against a server on a
// SQLite database: streaming with todos and files, an approval and its
// resume (approve, edit, reject), history, thread search, a joined and
// rejoined stream (Last-Event-ID), a refused second run, and cancel.
func TestOfficialJSSDK(t *testing.T) {
	node, err := exec.LookPath("node")
	if _, serr := os.Stat(filepath.Join(sdkDir, "node_modules")); err != nil || serr != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("node or the SDK is missing in CI (node: %v; %s/node_modules: %v)", err, sdkDir, serr)
		}
		t.Skipf("needs node and the SDK: cd server/%s && npm ci", sdkDir)
	}
	for _, version := range []string{"1.0.3", "1.15.0"} {
		t.Run(version, func(t *testing.T) {
			ctx := context.Background()
			db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "threads.db"), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			a, err := deepagents.New(deepagents.Config{
				Model:        replay.Inline{},
				Checkpointer: db.Saver(),
				InterruptOn:  map[string]deepagents.InterruptOn{"write_file": {}},
			})
			if err != nil {
				t.Fatal(err)
			}
			s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: db.Saver()})
			if err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s)
			defer func() {
				hs.CloseClientConnections()
				s.Close()
				hs.Close()
			}()
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(cctx, node, "sdk.mjs", hs.URL, version)
			cmd.Dir = sdkDir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the SDK's checks failed: %v\n%s", err, out)
			}
			t.Logf("%s", out)
		})
	}
}
