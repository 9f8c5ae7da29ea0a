package providertest

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/internal/golden"
	"github.com/deepagents-go/deepagents/llm"
)

// Exchange is one request to a provider and its answer, kept on disk in a
// directory of exchanges:
//
//   - NAME.request.json: the body the provider sends for Request, byte for
//     byte (key order included: prompt caches depend on it);
//   - NAME.response.sse: the body the server answers with, replayed as is;
//   - NAME.result.json: the llm.Response the provider makes of it.
//
// The request and result files are golden files (go test -update rewrites
// them); the response is input. A response recorded from the real API
// (see DEEPAGENTS_RECORD_WIRE in docs/providers.md) replaces a written one
// without changing the test.
type Exchange struct {
	Name    string
	Request *llm.Request
}

// RunExchanges replays each exchange of dir against the provider that
// newModel makes for a base URL.
func RunExchanges(t *testing.T, dir string, newModel func(t *testing.T, baseURL string) llm.Model, exchanges []Exchange) {
	for _, x := range exchanges {
		t.Run(x.Name, func(t *testing.T) {
			base := filepath.Join(dir, x.Name)
			answer, err := os.ReadFile(base + ".response.sse")
			if err != nil {
				t.Fatal(err)
			}
			srv := NewRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.Write(answer)
			})
			res, err := llm.Generate(context.Background(), newModel(t, srv.URL), x.Request)
			if err != nil {
				t.Fatalf("replaying %s.response.sse: %v", base, err)
			}
			if srv.Count() != 1 {
				t.Fatalf("%d requests, want 1", srv.Count())
			}
			golden.Check(t, base+".request.json", append(srv.Bodies[0], '\n'))
			got, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, base+".result.json", append(got, '\n'))
		})
	}
}
