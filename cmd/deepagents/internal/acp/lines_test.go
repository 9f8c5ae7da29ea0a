package acp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestBoundedLines: lines up to the limit go through as they are; a
// longer one that answers a request becomes an error answer to it, any
// other goes through as it is.
func TestBoundedLines(t *testing.T) {
	big := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, in, want string
	}{
		{name: "short lines", in: "{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}", want: "{\"a\":1}\n\n{\"b\":2}\n{\"c\":3}"},
		{name: "a long answer", in: `{"jsonrpc":"2.0","id":7,"result":{"content":"` + big + `"}}` + "\n{\"next\":1}\n",
			want: `{"error":{"code":-32603,"data":{"error":"the client's answer is 249 bytes long, over the limit of 100"},"message":"Internal error"},"id":7,"jsonrpc":"2.0"}` + "\n{\"next\":1}\n"},
		{name: "a long error answer with a string id", in: `{"id":"a-1","error":{"code":1,"message":"` + big + `"}}`,
			want: `{"error":{"code":-32603,"data":{"error":"the client's answer is 244 bytes long, over the limit of 100"},"message":"Internal error"},"id":"a-1","jsonrpc":"2.0"}` + "\n"},
		{name: "a long request", in: `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"x":"` + big + `"}}` + "\n{\"next\":1}\n",
			want: `{"jsonrpc":"2.0","id":1,"method":"session/prompt","params":{"x":"` + big + `"}}` + "\n{\"next\":1}\n"},
		{name: "a long answer whose id comes last", in: `{"result":"` + big + `","id":3}` + "\n",
			want: `{"result":"` + big + `","id":3}` + "\n"},
		{name: "a long line that is not JSON", in: big + "\n", want: big + "\n"},
	} {
		// A line read whole, and one read in parts (a buffer smaller
		// than the line).
		for _, size := range []int{64 << 10, 16} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, size), func(t *testing.T) {
				b := &boundedLines{r: bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(tc.in)), size), max: 100}
				got, err := io.ReadAll(iotest.OneByteReader(b))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.want {
					t.Errorf("got\n%s\nwant\n%s", got, tc.want)
				}
				for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
					if strings.HasPrefix(line, `{"error"`) && !json.Valid([]byte(line)) {
						t.Errorf("an invalid answer %s", line)
					}
				}
			})
		}
	}
}
