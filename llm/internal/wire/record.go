package wire

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
)

// RecordEnv names the environment variable that, when it holds a
// directory, makes every provider client write each exchange there: the
// request body as NNNN.request.json and the response body, as the client
// read it, as NNNN.response.sse. Headers (the API key among them) are not
// written. It is how the exchanges the provider tests replay are recorded
// from the real APIs.
const RecordEnv = "DEEPAGENTS_RECORD_WIRE"

// recorder is an http.RoundTripper that writes bodies to dir.
type recorder struct {
	next http.RoundTripper
	dir  string
	n    *atomic.Int64
}

// recording wraps t in a recorder when RecordEnv names a directory.
func recording(t http.RoundTripper) http.RoundTripper {
	dir := os.Getenv(RecordEnv)
	if dir == "" {
		return t
	}
	return &recorder{next: t, dir: dir, n: new(atomic.Int64)}
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	base := filepath.Join(r.dir, fmt.Sprintf("%04d", r.n.Add(1)))
	if req.Body != nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(body)
			body.Close()
			r.write(base+".request.json", b)
		}
	}
	res, err := r.next.RoundTrip(req)
	if err != nil {
		return res, err
	}
	res.Body = &teeBody{ReadCloser: res.Body, path: base + ".response.sse", rec: r}
	return res, nil
}

func (r *recorder) write(path string, b []byte) {
	if err := os.MkdirAll(r.dir, 0o755); err == nil {
		_ = os.WriteFile(path, b, 0o644) // best effort: recording never fails a request
	}
}

// teeBody keeps what the client reads of a response and writes it when the
// body is closed.
type teeBody struct {
	io.ReadCloser
	path string
	rec  *recorder
	buf  bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	return n, err
}

func (b *teeBody) Close() error {
	b.rec.write(b.path, b.buf.Bytes())
	return b.ReadCloser.Close()
}
