package isolate

import "strings"

// Merge3ForTest merges three texts as Merge does a text file both sides
// changed.
func Merge3ForTest(base, ours, theirs string) (string, int) {
	out, hunks := merge3(splitLines([]byte(base)), splitLines([]byte(ours)), splitLines([]byte(theirs)), "ours", "theirs")
	return strings.Join(out, ""), len(hunks)
}
