package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// maxLine is the longest message (a line) boundedLines lets through: the
// SDK reads at most 10 MiB a line (acp-go-sdk's connection.go) and closes
// the connection on a longer one, every session with it.
const maxLine = 10<<20 - 4<<10

// boundedLines is the client's side of the connection as the SDK reads it,
// where a message longer than max, which the SDK would refuse by closing
// the connection, does not end the connection when it answers one of the
// agent's requests: it becomes an error answer to that request. (An
// editor's text of a file, fs/read_text_file's answer, is the message the
// client controls the length of.) Any other long line goes through as it
// is. A line is held whole before it goes through, so at most max bytes
// of one message are held besides the SDK's own buffer.
type boundedLines struct {
	r   *bufio.Reader
	max int
	out []byte // what Read gives next
	err error  // r's error, once out is given
	// passing: the rest of an overlong line goes through as it comes.
	passing bool
}

func newBoundedLines(r io.Reader, max int) *boundedLines {
	return &boundedLines{r: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Read implements io.Reader.
func (b *boundedLines) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.next()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// next reads the next line, or the next part of an overlong one, into
// out.
func (b *boundedLines) next() {
	if b.passing {
		chunk, err := b.r.ReadSlice('\n')
		b.out = append([]byte(nil), chunk...)
		b.passing = err == bufio.ErrBufferFull
		if err != nil && err != bufio.ErrBufferFull {
			b.err = err
		}
		return
	}
	var line []byte
	for {
		chunk, err := b.r.ReadSlice('\n')
		line = append(line, chunk...)
		full := err == bufio.ErrBufferFull
		switch {
		case len(line) > b.max:
			b.overlong(line, !full, err)
			return
		case full:
			continue
		case err != nil:
			b.err = err
		}
		b.out = line
		return
	}
}

// overlong deals with a line over max bytes known by its start (all of
// it when whole; err is the read's that ended start): an error answer in
// its place when it answers a request, the line itself otherwise.
func (b *boundedLines) overlong(start []byte, whole bool, err error) {
	id, ok := responseID(start)
	if !ok {
		b.out, b.passing = start, !whole
		if whole && err != nil {
			b.err = err
		}
		return
	}
	n := len(start)
	for !whole {
		chunk, err := b.r.ReadSlice('\n')
		n += len(chunk)
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			b.err = err
		}
		break
	}
	if whole && err != nil {
		b.err = err
	}
	msg, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      id,
		"error": map[string]any{
			"code":    -32603,
			"message": "Internal error",
			"data":    map[string]any{"error": fmt.Sprintf("the client's answer is %d bytes long, over the limit of %d", n, b.max)},
		},
	})
	b.out = append(msg, '\n')
}

// responseID returns the id of the JSON-RPC response that line starts
// with: an object whose "id" comes before its "result" or "error", with no
// "method" (a request's); false when the start says otherwise or does not
// say.
func responseID(line []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var id json.RawMessage
	for {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		key, ok := t.(string)
		if !ok {
			return nil, false
		}
		switch key {
		case "method":
			return nil, false
		case "result", "error":
			return id, id != nil
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if key == "id" {
			id = v
		}
	}
}
