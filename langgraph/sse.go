package langgraph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"mime"
	"time"
)

// Event is one server-sent event of a run's stream.
type Event struct {
	// ID is the event's ID (the last one the stream gave, as the SSE
	// standard has it): what JoinStream resumes after.
	ID string
	// Name is the event's name: the stream mode it is of (metadata,
	// values, messages, updates, ...), error or end; "message" when the
	// server gave none.
	Name string
	// Data is the event's data, JSON.
	Data json.RawMessage
}

// stream sends one request whose answer is a stream of server-sent
// events, and yields its events, with the client's headers and then hdr
// (name, value, ...). Each iteration sends the request anew. It ends when
// the stream does, when the consumer stops (closing the answer's body) or
// with an error: the connection's or ctx's, or an *Error for an answer
// that is not a success or not a stream of JSON events. The client's
// Timeout bounds the wait for the answer's headers, not the stream.
func (c *Client) stream(ctx context.Context, method, path string, body any, hdr ...string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		parent := ctx
		ctx, cancel := context.WithCancel(parent)
		defer cancel()
		var timer *time.Timer
		if c.Timeout > 0 {
			timer = time.AfterFunc(c.Timeout, cancel)
		}
		res, err := c.send(ctx, method, path, body, "text/event-stream", hdr...)
		if timer != nil && !timer.Stop() {
			if res != nil {
				res.Body.Close()
			}
			yield(Event{}, fmt.Errorf("%s %s: no answer within %v: %w", method, path, c.Timeout, context.DeadlineExceeded))
			return
		}
		if err != nil {
			if e := parent.Err(); e != nil {
				err = fmt.Errorf("%s %s: %w", method, path, e)
			}
			yield(Event{}, err)
			return
		}
		defer res.Body.Close()
		fail := func(msg string) error {
			return &Error{Method: method, Path: path, StatusCode: res.StatusCode, Message: msg}
		}
		if res.StatusCode < 200 || res.StatusCode > 299 {
			data, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			yield(Event{}, fail(res.Status+detail(data)))
			return
		}
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
			yield(Event{}, fail(fmt.Sprintf("the answer is not a stream of events but %q", res.Header.Get("Content-Type"))))
			return
		}
		r := newEventReader(res.Body)
		for {
			ev, err := r.next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var bad badStream
				switch {
				case errors.As(err, &bad):
					err = fail(string(bad))
				case parent.Err() != nil:
					err = fmt.Errorf("%s %s: reading the stream: %w", method, path, parent.Err())
				default:
					err = fmt.Errorf("%s %s: reading the stream: %w", method, path, err)
				}
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// badStream says what is wrong with a stream that is not one of JSON
// events.
type badStream string

func (b badStream) Error() string { return string(b) }

// eventReader reads server-sent events, as the SSE standard says: lines
// ending in LF or CRLF, fields event, data (lines joined by LF) and id
// (which lasts until the next), comments and other fields skipped, an
// event without data not dispatched, a last event without its blank line
// dropped.
type eventReader struct {
	sc *bufio.Scanner
	id string
}

func newEventReader(r io.Reader) *eventReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxAnswer)
	return &eventReader{sc: sc}
}

// next returns the next event, io.EOF at the stream's end.
func (r *eventReader) next() (Event, error) {
	var name string
	var data []byte
	hasData := false
	for r.sc.Scan() {
		line := r.sc.Bytes()
		if len(line) == 0 {
			if !hasData {
				name = ""
				continue
			}
			if name == "" {
				name = "message"
			}
			if !json.Valid(data) {
				return Event{}, badStream(fmt.Sprintf("the data of event %q (id %q) is not JSON", name, r.id))
			}
			return Event{ID: r.id, Name: name, Data: data}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if hasData {
				data = append(data, '\n')
			}
			data, hasData = append(data, value...), true
			if len(data) > MaxAnswer {
				return Event{}, badStream(fmt.Sprintf("an event is larger than %d MiB", MaxAnswer>>20))
			}
		case "id":
			if bytes.IndexByte(value, 0) < 0 {
				r.id = string(value)
			}
		}
	}
	if err := r.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return Event{}, badStream(fmt.Sprintf("a line of the stream is larger than %d MiB", MaxAnswer>>20))
		}
		return Event{}, err
	}
	return Event{}, io.EOF
}
