package isolate

import (
	"bytes"
	"strings"
)

// splitLines cuts b into lines, each with its "\n" (the last one without,
// when b does not end with one).
func splitLines(b []byte) []string {
	var out []string
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, string(b))
			break
		}
		out = append(out, string(b[:i+1]))
		b = b[i+1:]
	}
	return out
}

// maxEdits bounds the edit distance diff works out line by line (what it
// keeps grows with its square); past it the middle of the two texts counts
// as replaced whole, which a merge then takes for one hunk.
const maxEdits = 2000

// match returns, for each line of a, the index of the line of b it is
// paired with in a longest common subsequence, -1 for none (Myers' O(ND)
// algorithm, after the common prefix and suffix).
func match(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		m[pre] = pre
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		m[len(a)-1-suf] = len(b) - 1 - suf
		suf++
	}
	x, y := a[pre:len(a)-suf], b[pre:len(b)-suf]
	for _, p := range myers(x, y) {
		m[pre+p[0]] = pre + p[1]
	}
	return m
}

// myers returns the pairs of lines (index in x, index in y) a shortest
// edit script keeps; none when it takes more than maxEdits.
func myers(x, y []string) [][2]int {
	n, m := len(x), len(y)
	if n == 0 || m == 0 {
		return nil
	}
	maxD := min(n+m, maxEdits)
	off := maxD + 1
	v := make([]int32, 2*off+1)
	// trace[d] holds v[-d..d] as step d found it.
	var trace [][]int32
	found := -1
	for d := 0; d <= maxD && found < 0; d++ {
		trace = append(trace, append([]int32(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			var i int
			if k == -d || k != d && v[off+k-1] < v[off+k+1] {
				i = int(v[off+k+1])
			} else {
				i = int(v[off+k-1]) + 1
			}
			j := i - k
			for i < n && j < m && x[i] == y[j] {
				i++
				j++
			}
			v[off+k] = int32(i)
			if i >= n && j >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return nil
	}
	var pairs [][2]int
	i, j := n, m
	for d := found; d > 0; d-- {
		pv := trace[d] // index k+d is diagonal k
		at := func(k int) int { return int(pv[k+d]) }
		k := i - j
		var pk int
		if k == -d || k != d && at(k-1) < at(k+1) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		pi := at(pk)
		pj := pi - pk
		for i > pi && j > pj {
			pairs = append(pairs, [2]int{i - 1, j - 1})
			i--
			j--
		}
		i, j = pi, pj
	}
	for i > 0 && j > 0 {
		pairs = append(pairs, [2]int{i - 1, j - 1})
		i--
		j--
	}
	for l, r := 0, len(pairs)-1; l < r; l, r = l+1, r-1 {
		pairs[l], pairs[r] = pairs[r], pairs[l]
	}
	return pairs
}

// Hunk is a region of a file both sides changed differently: the lines
// of the base (the file at the fork), of the folder now (Ours) and of the
// subagent's workspace (Theirs), each with its terminator.
type Hunk struct {
	// Line is the 1-based line of the merged file where the hunk's
	// conflict markers start.
	Line int
	// OursLine is the 1-based line in the folder's version where its
	// side of the hunk starts.
	OursLine           int
	Base, Ours, Theirs []string
}

// Conflict markers in a merged file, as git writes them.
const (
	markerOurs   = "<<<<<<< "
	markerSep    = "=======\n"
	markerTheirs = ">>>>>>> "
)

// merge3 merges two versions of a text that both started from base: the
// changes of either side where the other kept the lines as they were, and
// changes they both made the same way. Where they changed the same lines
// differently, out holds both versions between conflict markers labelled
// oursLabel and theirsLabel, and hunks lists each.
func merge3(base, ours, theirs []string, oursLabel, theirsLabel string) (out []string, hunks []Hunk) {
	ma, mb := match(base, ours), match(base, theirs)
	o, a, b := 0, 0, 0 // positions in base, ours, theirs
	take := func(ls []string) { out = append(out, ls...) }
	for {
		// The stable run: base lines matched in both, in step.
		for o < len(base) && ma[o] == a && mb[o] == b {
			out = append(out, base[o])
			o, a, b = o+1, a+1, b+1
		}
		// The next base line matched on both sides ends the unstable run.
		end := o
		for end < len(base) && (ma[end] < a || mb[end] < b) {
			end++
		}
		ea, eb := len(ours), len(theirs)
		if end < len(base) {
			ea, eb = ma[end], mb[end]
		}
		if o == end && a == ea && b == eb {
			if end >= len(base) {
				return out, hunks
			}
			continue
		}
		bs, os_, ts := base[o:end], ours[a:ea], theirs[b:eb]
		switch {
		case equal(os_, bs):
			take(ts)
		case equal(ts, bs), equal(os_, ts):
			take(os_)
		default:
			hunks = append(hunks, Hunk{Line: len(out) + 1, OursLine: a + 1, Base: bs, Ours: os_, Theirs: ts})
			out = append(out, markerOurs+oursLabel+"\n")
			out = append(out, withNewline(os_)...)
			out = append(out, markerSep)
			out = append(out, withNewline(ts)...)
			out = append(out, markerTheirs+theirsLabel+"\n")
		}
		o, a, b = end, ea, eb
		if end >= len(base) && a >= len(ours) && b >= len(theirs) {
			return out, hunks
		}
	}
}

// withNewline returns ls with a last line that ends without one given
// one, so that a conflict marker after it starts a line.
func withNewline(ls []string) []string {
	if n := len(ls); n > 0 && !strings.HasSuffix(ls[n-1], "\n") {
		ls = append(ls[:n-1:n-1], ls[n-1]+"\n")
	}
	return ls
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
