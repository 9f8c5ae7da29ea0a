package search

import (
	"regexp/syntax"
	"testing"
)

func TestRequiredClassRunPicks(t *testing.T) {
	for _, c := range []struct {
		pattern string
		want    int // run length; 0 for none
	}{
		{`[A-Z][a-z]+[0-9]{3}\b`, 4},
		{`[0-9]{3}`, 3},
		{`[0-9][0-9]`, 0},
		{`\w+`, 0},
		{`[a-z]+`, 0},
		{`(?i)[a-z]+[0-9]{4}`, 4}, // (?i)[a-z] includes non-ASCII letters: only the digits
	} {
		tree, err := syntax.Parse("(?m)"+c.pattern, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		run := requiredClassRun(tree.Simplify())
		got := 0
		if run != nil {
			got = len(run.sets)
		}
		if got != c.want {
			t.Errorf("%s: run of %d, want %d", c.pattern, got, c.want)
		}
	}
}
