package permission

import (
	"errors"
	"reflect"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		cmd  string
		want [][]string // nil: unparsable
	}{
		{"git status", [][]string{{"git", "status"}}},
		{"  git   status  -s ", [][]string{{"git", "status", "-s"}}},
		{"git status; rm -rf x", [][]string{{"git", "status"}, {"rm", "-rf", "x"}}},
		{"a && b || c | d & e\nf", [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}}},
		{"echo 'a; rm -rf x'", [][]string{{"echo", "a; rm -rf x"}}},
		{`echo "a && b" c\;d`, [][]string{{"echo", "a && b", "c;d"}}},
		{`echo ""`, [][]string{{"echo", ""}}},
		{"FOO=1 BAR=2 rm -rf x", [][]string{{"rm", "-rf", "x"}}},
		{"go test ./... 2>&1 | tail -5", [][]string{{"go", "test", "./...", "2", ">", "1"}, {"tail", "-5"}}},
		{"make &> log", [][]string{{"make", ">", "log"}}},
		{"ls # ; rm -rf x", [][]string{{"ls"}}},
		{"/bin/rm -rf x", [][]string{{"/bin/rm", "-rf", "x"}}},
		{"echo $HOME", [][]string{{"echo", "$HOME"}}},
		// Fail closed.
		{"echo $(rm -rf x)", nil},
		{"echo `rm -rf x`", nil},
		{`echo "$(rm -rf x)"`, nil},
		{"(cd x && rm -rf y)", nil},
		{"{ rm -rf x; }", nil},
		{"cat <<EOF\nx\nEOF", nil},
		{"diff <(ls a) <(ls b)", nil},
		{"echo 'unbalanced", nil},
		{`echo "unbalanced`, nil},
		{"sh -c 'rm -rf x'", nil},
		{"bash -c rm", nil},
		{"sudo rm -rf /", nil},
		{"xargs rm < list", nil},
		{"env rm -rf x", nil},
		{"X=rm; $X -rf x", nil},
		{"r? -rf x", nil},
		{"find . -exec rm {} +", nil},
		{"echo ${HOME}", nil},
	}
	for _, tt := range tests {
		got, err := Split(tt.cmd)
		if tt.want == nil {
			if !errors.Is(err, ErrUnparsable) {
				t.Errorf("Split(%q) = %q, %v; want ErrUnparsable", tt.cmd, got, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Split(%q) = %q, %v; want %q", tt.cmd, got, err, tt.want)
		}
	}
}
