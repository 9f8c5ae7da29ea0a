package openai

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// sseReader reads the events of a text/event-stream body, as the
// streaming Chat Completions API sends them: "data:" lines, an empty line
// ending each event, comments and other fields ignored.
type sseReader struct {
	r    *bufio.Reader
	data []byte
	// done is set by the line "data: [DONE]", which ends a complete
	// stream; it counts once its line ends, blank line or not.
	done bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 16<<10)}
}

var doneData = []byte("[DONE]")

// next returns the data of the next event, its lines joined by "\n", or
// io.EOF at the end of the body or after [DONE] (then done is set). An
// event cut off by the end of the body is not returned.
func (s *sseReader) next() ([]byte, error) {
	s.data = s.data[:0]
	for !s.done {
		line, err := s.line()
		if err != nil {
			return nil, err
		}
		if len(line) == 0 {
			if len(s.data) > 0 {
				return s.data, nil
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		if string(name) != "data" {
			continue // a comment, or a field the API does not use
		}
		if len(s.data) == 0 && bytes.HasPrefix(value, doneData) {
			s.done = true
			break
		}
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
	}
	return nil, io.EOF
}

// line returns the next line without its ending (\n or \r\n). A last line
// without an ending is returned with io.EOF, and so dropped: the event it
// belongs to is incomplete.
func (s *sseReader) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A long line: gather it in a buffer of its own.
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}
