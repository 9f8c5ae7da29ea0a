package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool whose execution.taskSupport is "required" may be called only as
// a task (task-augmented tools/call, of the MCP's tasks extension), which
// this client does not do: a plain call always fails. The SDK drops the
// field when it reads a tool, so it is read here from the messages as they
// arrive, and listTools leaves such tools out.

// maxScanned bounds what is held to look for taskSupport in one message;
// the SDK's own bound on a message.
const maxScanned = 16 << 20

// taskOnly records the tools of a tools/list result that require tasks.
func (s *server) taskOnly(result []byte) {
	if !bytes.Contains(result, []byte(`"taskSupport"`)) {
		return
	}
	var list struct {
		Tools []struct {
			Name      string `json:"name"`
			Execution *struct {
				TaskSupport string `json:"taskSupport"`
			} `json:"execution"`
		} `json:"tools"`
	}
	if json.Unmarshal(result, &list) != nil {
		return
	}
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	for _, t := range list.Tools {
		if t.Execution != nil && t.Execution.TaskSupport == "required" {
			if s.tasks == nil {
				s.tasks = map[string]bool{}
			}
			s.tasks[t.Name] = true
		}
	}
}

// requiresTask reports whether the server said the tool runs only as a
// task.
func (s *server) requiresTask(name string) bool {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	return s.tasks[name]
}

// taskScan looks at the results a stdio connection reads. (The
// streamable HTTP client's connection cannot be wrapped: the SDK tells it
// of the session through an unexported method; HTTP bodies are read by
// scanBody instead.)
type taskScan struct {
	sdk.Transport
	srv *server
}

func (t taskScan) Connect(ctx context.Context) (sdk.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return scanConn{conn, t.srv}, nil
}

type scanConn struct {
	sdk.Connection
	srv *server
}

func (c scanConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil && r.Error == nil {
		c.srv.taskOnly(r.Result)
	}
	return m, err
}

// scanTransport hands the bodies of an HTTP server's answers to scanBody.
type scanTransport struct {
	next http.RoundTripper
	srv  *server
}

func (t scanTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	ct := resp.Header.Get("Content-Type")
	sse := strings.HasPrefix(ct, "text/event-stream")
	if !sse && !strings.HasPrefix(ct, "application/json") {
		return resp, nil
	}
	resp.Body = &scanBody{ReadCloser: resp.Body, sse: sse, srv: t.srv}
	return resp, nil
}

// scanBody passes a body on as it is read, and hands each JSON-RPC result
// in it (the whole of a JSON body, each data line of an event stream) to
// the server's taskOnly.
type scanBody struct {
	io.ReadCloser
	sse  bool
	srv  *server
	buf  []byte
	over bool // the current message passed maxScanned: skipped
}

func (b *scanBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.feed(p[:n])
	if err == io.EOF && !b.sse && !b.over {
		b.message(b.buf)
		b.buf = nil
	}
	return n, err
}

func (b *scanBody) feed(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if !b.sse || i < 0 {
			b.keep(p)
			return
		}
		b.keep(p[:i])
		if !b.over {
			if data, ok := bytes.CutPrefix(bytes.TrimRight(b.buf, "\r"), []byte("data:")); ok {
				b.message(data)
			}
		}
		b.buf, b.over = b.buf[:0], false
		p = p[i+1:]
	}
}

func (b *scanBody) keep(p []byte) {
	if b.over {
		return
	}
	if len(b.buf)+len(p) > maxScanned {
		b.buf, b.over = b.buf[:0], true
		return
	}
	b.buf = append(b.buf, p...)
}

func (b *scanBody) message(data []byte) {
	if !bytes.Contains(data, []byte(`"taskSupport"`)) {
		return
	}
	var m struct {
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(data, &m) == nil && m.Result != nil {
		b.srv.taskOnly(m.Result)
	}
}
