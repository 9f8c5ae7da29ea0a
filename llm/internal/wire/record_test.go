package wire

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/deepagents-go/deepagents/llm"
)

// TestRecordWritesBodies checks that DEEPAGENTS_RECORD_WIRE makes the
// client write each request body and the response body it read, and no
// header.
func TestRecordWritesBodies(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exchanges")
	t.Setenv(RecordEnv, dir)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: answer to "+string(b)+"\n\n")
	}))
	defer srv.Close()
	c := NewHTTPClient(llm.Limits{}.WithDefaults())
	for _, body := range []string{`{"n":1}`, `{"n":2}`} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader([]byte(body)))
		req.Header.Set("X-Api-Key", "secret")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(res.Body)
		res.Body.Close()
	}
	for name, want := range map[string]string{
		"0001.request.json": `{"n":1}`,
		"0001.response.sse": "data: answer to {\"n\":1}\n\n",
		"0002.request.json": `{"n":2}`,
		"0002.response.sse": "data: answer to {\"n\":2}\n\n",
	} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
		if bytes.Contains(got, []byte("secret")) {
			t.Errorf("%s holds the API key", name)
		}
	}
}

// TestNoRecordByDefault checks that nothing is wrapped without the variable.
func TestNoRecordByDefault(t *testing.T) {
	t.Setenv(RecordEnv, "")
	if _, ok := NewHTTPClient(llm.Limits{}).Transport.(*recorder); ok {
		t.Error("transport records without DEEPAGENTS_RECORD_WIRE")
	}
}
