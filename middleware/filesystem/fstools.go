package filesystem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/clip"
)

const (
	lsDescription = `List the entries of a directory, one per line; directories end with "/". Not recursive: use glob to find files at any depth.`

	readDescription = `Read a file. The result starts with a header (after any notice) such as "@@ lines 1-2000 | next offset 2000 @@": the 1-based lines shown, and the offset to continue from when more follow. Every line after the header is the file's exact content; never copy the header into an edit.

By default it returns up to 2000 lines from the start. For long files, pass offset (0-based line to start at) and limit (number of lines) to page through them. Read a file before editing it.`

	writeDescription = `Write a file: create it with the given content, or replace the whole of an existing one. To change part of a file, use edit_file instead.`

	editDescription = `Replace an exact string in a file.

old_string must match the file's text exactly, including whitespace and indentation. It must occur exactly once unless replace_all is true, so include enough surrounding lines to make it unique. Read the file first.`

	multiEditDescription = `Make several edits to one file in one call: each replaces an exact string, as edit_file does, in order, each in the text the ones before it left. Either every edit is made or, if one fails, none is.

Use it instead of several edit_file calls on the same file. Read the file first.`

	globDescription = `Find files by a glob pattern and return their absolute paths, sorted, one per line.

A pattern without "/" matches file names at any depth below path: "*.py" finds /src/app/main.py. A pattern with "/" matches the path relative to path (default /): "src/**/*.py", where "**" stands for any number of directories. Names starting with "." (".env", ".github") are matched only by a pattern element that starts with "." too, and "**" does not enter such directories: "*.yml" finds /.github/workflows/ci.yml, "**/*.yml" does not. If path names a file, the pattern is matched against its name.`

	grepDescription = `Search file contents for a literal text (not a regular expression) under path (default /), a directory or a file.

The pattern is matched as written: "foo|bar" finds that text, not foo or bar; run one search per alternative. glob limits the files searched, with the rules of the glob tool ("*.go" at any depth, "src/**/*.ts"). output_mode: files_with_matches (default) lists matching files; content shows each matching line under its file as "  N: text"; count gives the number of matching lines per file. max_count caps the matches returned.`

	grepRegexpDescription = `Search file contents with a regular expression (RE2 syntax) under path (default /), a directory or a file.

glob limits the files searched, with the rules of the glob tool ("*.go" at any depth, "src/**/*.ts"). output_mode: files_with_matches (default) lists matching files; content shows each matching line under its file as "  N: text"; count gives the number of matching lines per file. max_count caps the matches returned.`

	executeDescription = executeRun + " timeout (seconds) overrides the default limit. " + executeAvoid
	// executeRun and executeAvoid are the description's first and last
	// sentences, around what it says of timeouts.
	executeRun   = "Run a shell command in the workspace and return its combined output and exit code."
	executeAvoid = "Avoid interactive commands; use the file tools to read and search files."
)

type lsIn struct {
	Path string `json:"path" jsonschema:"absolute path of the directory to list"`
}

func (f *Middleware) ls(ctx context.Context, in lsIn) (string, error) {
	p, err := f.clean(in.Path)
	if err != nil {
		return "", err
	}
	text, err := backend.ListText(ctx, f.cfg.Backend, p)
	if err != nil {
		return "", errors.New(backendErrorText(p, err))
	}
	if text == "" {
		return noFilesFound, nil
	}
	return capOutput(text, f.evictChars()), nil
}

type readIn struct {
	FilePath string `json:"file_path" jsonschema:"absolute path of the file to read"`
	Offset   int    `json:"offset,omitempty" jsonschema:"0-based line to start reading at"`
	Limit    int    `json:"limit,omitempty" jsonschema:"maximum number of lines to read"`
	hasLimit bool   // the arguments gave a limit (0 differs from none)
}

// UnmarshalJSON tells an explicit limit of 0 from none.
func (in *readIn) UnmarshalJSON(b []byte) error {
	type plain readIn
	var raw struct {
		plain
		Limit *int `json:"limit"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*in = readIn(raw.plain)
	if raw.Limit != nil {
		in.Limit, in.hasLimit = *raw.Limit, true
	}
	return nil
}

func (f *Middleware) read(ctx context.Context, in readIn) (string, error) {
	p, err := f.clean(in.FilePath)
	if err != nil {
		return "", err
	}
	// As the references do: a zero limit reads nothing and says so (the
	// file was not looked at, so it must not read as empty), a negative
	// one means the default, and a negative offset reads from the start
	// with a notice.
	limit := in.Limit
	switch {
	case limit == 0 && in.hasLimit:
		return fmt.Sprintf(noLinesRequested, limit), nil
	case limit <= 0:
		limit = DefaultReadLimit
	}
	// One line more than shown tells whether the file goes on.
	res, err := f.cfg.Backend.Read(ctx, p, max(in.Offset, 0), min(limit, math.MaxInt-1)+1)
	if err != nil {
		return "", errors.New(backendErrorText(p, err))
	}
	more := len(res.Lines) > limit
	if more {
		res.Lines = res.Lines[:limit]
	}
	if len(res.Lines) == 0 || (res.Offset == 0 && !more && allBlank(res.Lines)) {
		return emptyFileReminder, nil
	}
	for i, line := range res.Lines {
		if !utf8.ValidString(line) {
			return "", fmt.Errorf(notUTF8Text, p, res.Offset+1+i, firstInvalidByte(line))
		}
	}
	// The lines that fit the result's bound (what is left of it after
	// the header and notices), whole, or the start of the first one.
	budget := f.evictChars()
	if budget > 0 {
		budget = max(budget-readReserve, 1)
	}
	body, shown, cut := fitLines(res.Lines, budget)
	last := res.Offset + max(shown, 1) // the last line shown, 1-based
	var b strings.Builder
	// Notices come first, so that every line after the header is the
	// file's.
	if in.Offset < 0 {
		fmt.Fprintf(&b, clampedOffsetNotice, in.Offset)
	}
	switch {
	case cut:
		fmt.Fprintf(&b, longLineNotice, last, last)
	case res.Truncated && shown == len(res.Lines):
		fmt.Fprintf(&b, readCutNotice, last, last)
	}
	fmt.Fprintf(&b, "@@ lines %d-%d", res.Offset+1, last)
	if more || res.Truncated || cut || shown < len(res.Lines) {
		fmt.Fprintf(&b, " | next offset %d", last)
	}
	b.WriteString(" @@\n")
	b.WriteString(body)
	return b.String(), nil
}

// fitLines joins the lines that fit in max bytes (no bound when max is 0),
// and says how many. When not even the first fits, it is cut at a rune's
// start to fit, and cut is true.
func fitLines(lines []string, max int) (body string, n int, cut bool) {
	size := 0
	for n < len(lines) {
		add := len(lines[n]) + min(n, 1) // and the newline before it
		if max > 0 && size+add > max {
			break
		}
		size += add
		n++
	}
	if n == 0 && len(lines) > 0 {
		end := max
		for end > 0 && !utf8.RuneStart(lines[0][end]) {
			end--
		}
		return lines[0][:end], 1, true
	}
	return strings.Join(lines[:n], "\n"), n, false
}

// allBlank reports whether lines hold nothing but white space: such a file
// reads as empty.
func allBlank(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			return false
		}
	}
	return true
}

type writeIn struct {
	FilePath string `json:"file_path" jsonschema:"absolute path of the file to write"`
	Content  string `json:"content" jsonschema:"the file's content"`
}

func (f *Middleware) write(ctx context.Context, in writeIn) (string, error) {
	p, err := f.clean(in.FilePath)
	if err != nil {
		return "", err
	}
	defer f.locks.lock(p)()
	err = f.cfg.Backend.Write(ctx, p, in.Content)
	if errors.Is(err, backend.ErrExists) {
		// As both references now do, an existing file is replaced.
		err = f.cfg.Backend.Upload(ctx, []backend.File{{Path: p, Content: []byte(in.Content)}})[0].Err
	}
	if err != nil {
		return "", errors.New(backendErrorText(p, err))
	}
	return "Updated file " + p, nil
}

type editIn struct {
	FilePath   string `json:"file_path" jsonschema:"absolute path of the file to edit"`
	OldString  string `json:"old_string" jsonschema:"the exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
}

func (f *Middleware) edit(ctx context.Context, in editIn) (string, error) {
	p, err := f.clean(in.FilePath)
	if err != nil {
		return "", err
	}
	defer f.locks.lock(p)()
	n, err := f.cfg.Backend.Edit(ctx, p, in.OldString, in.NewString, in.ReplaceAll)
	if err != nil {
		return "", editError(p, in.OldString, err)
	}
	return fmt.Sprintf("Successfully replaced %d instance(s) of the string in '%s'", n, p), nil
}

// editError is what the model reads of an edit of p that failed.
func editError(p, oldString string, err error) error {
	var (
		me *backend.MatchCountError
		tn *backend.TrailingNewlineError
	)
	switch {
	case errors.As(err, &me):
		return fmt.Errorf("Error: String '%s' appears %d times in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context.", oldString, me.Count)
	case errors.Is(err, backend.ErrNoMatch) && oldString == "":
		return errors.New("Error: old_string is empty, and only an empty file can be edited with an empty old_string; give the exact text to replace")
	case errors.As(err, &tn) && tn.Count > 1:
		return fmt.Errorf("Error: old_string ends with a newline, but the file does not end with one. Without that newline old_string occurs %d times in the file: drop the newline (from new_string too, if it ends with one) and add surrounding text so that the match is unique.", tn.Count)
	case errors.As(err, &tn):
		return errors.New("Error: old_string ends with a newline, but the file does not end with one. Retry without that newline (and without it at the end of new_string, if it has one).")
	case errors.Is(err, backend.ErrNoMatch):
		return fmt.Errorf("Error: String not found in file: '%s'", oldString)
	default:
		return errors.New(backendErrorText(p, err))
	}
}

type multiEditIn struct {
	FilePath string     `json:"file_path" jsonschema:"absolute path of the file to edit"`
	Edits    []editStep `json:"edits" jsonschema:"the replacements, in order: each applies to the text the ones before it left"`
}

type editStep struct {
	OldString  string `json:"old_string" jsonschema:"the exact text to replace"`
	NewString  string `json:"new_string" jsonschema:"the text to put in its place"`
	ReplaceAll bool   `json:"replace_all,omitempty" jsonschema:"replace every occurrence instead of requiring exactly one"`
}

// maxEdits bounds one multi_edit call.
const maxEdits = 100

// multiEdit makes every edit or none: it works them out on the file's
// text, then writes the result with one Edit of the whole text, which
// fails (and changes nothing) if the file changed meanwhile.
func (f *Middleware) multiEdit(ctx context.Context, in multiEditIn) (string, error) {
	p, err := f.clean(in.FilePath)
	if err != nil {
		return "", err
	}
	switch {
	case len(in.Edits) == 0:
		return "", errors.New("Error: edits is empty; give at least one {old_string, new_string}")
	case len(in.Edits) > maxEdits:
		return "", fmt.Errorf("Error: %d edits in one call; at most %d", len(in.Edits), maxEdits)
	}
	defer f.locks.lock(p)()
	got := f.cfg.Backend.Download(ctx, []string{p})
	if len(got) != 1 || got[0].Err != nil {
		err := errors.New("no answer")
		if len(got) == 1 {
			err = got[0].Err
		}
		return "", errors.New(backendErrorText(p, err))
	}
	before := string(got[0].Content)
	text, n := before, 0
	for i, e := range in.Edits {
		next, k, err := backend.ReplaceIn(text, e.OldString, e.NewString, e.ReplaceAll)
		if err != nil {
			return "", fmt.Errorf("Edit %d of %d failed, so none was made. %w", i+1, len(in.Edits), editError(p, e.OldString, err))
		}
		text, n = next, n+k
	}
	if text != before {
		if _, err := f.cfg.Backend.Edit(ctx, p, before, text, false); errors.Is(err, backend.ErrNoMatch) {
			return "", fmt.Errorf("Error: '%s' changed while the edits were worked out, so none was made. Read it again and retry.", p)
		} else if err != nil {
			return "", errors.New(backendErrorText(p, err))
		}
	}
	return fmt.Sprintf("Successfully made %d edit(s), %d replacement(s), in '%s'", len(in.Edits), n, p), nil
}

type globIn struct {
	Pattern string `json:"pattern" jsonschema:"glob pattern such as **/*.go"`
	Path    string `json:"path,omitempty" jsonschema:"directory to search from"`
}

func (f *Middleware) glob(ctx context.Context, in globIn) (string, error) {
	p, err := f.clean(in.Path)
	if err != nil {
		return "", err
	}
	gctx, cancel := withLimit(ctx, f.globTimeout())
	defer cancel()
	infos, err := f.cfg.Backend.Glob(gctx, in.Pattern, p)
	if err != nil {
		switch {
		case errors.Is(err, backend.ErrInvalidPattern):
			return "", fmt.Errorf("Error: Invalid glob pattern: %s (%s)", clip.Text(in.Pattern, 200), invalidPatternReason(err))
		case ctx.Err() != nil:
			return "", ctx.Err()
		case gctx.Err() != nil:
			return "", fmt.Errorf(globTimeoutText, f.globTimeout())
		}
		return "", errors.New(backendErrorText(p, err))
	}
	var b strings.Builder
	n := 0
	for _, fi := range infos {
		if fi.IsDir {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(fi.Path)
		n++
	}
	if n == 0 {
		return noFilesFound, nil
	}
	return capOutput(b.String(), f.evictChars()), nil
}

type grepIn struct {
	Pattern    string `json:"pattern" jsonschema:"the text to search for"`
	Path       string `json:"path,omitempty" jsonschema:"file or directory to search"`
	Glob       string `json:"glob,omitempty" jsonschema:"only search files matching this glob, such as *.go"`
	OutputMode string `json:"output_mode,omitempty" jsonschema:"files_with_matches, content or count"`
	MaxCount   int    `json:"max_count,omitempty" jsonschema:"the most matches to return (at least 1; default and upper bound: the configured limit)"`
}

func (f *Middleware) grep(ctx context.Context, in grepIn) (string, error) {
	p, err := f.clean(in.Path)
	if err != nil {
		return "", err
	}
	lim := f.cfg.Grep
	if n := len(in.Pattern); n > lim.maxPatternBytes() {
		return "", fmt.Errorf("Error: the pattern is %d bytes long; grep accepts at most %d. Search for a shorter, more specific pattern.", n, lim.maxPatternBytes())
	}
	if in.MaxCount < 0 {
		return "", fmt.Errorf("Error: max_count must be at least 1, got %d.", in.MaxCount)
	}
	maxMatches := lim.maxMatches()
	if in.MaxCount > 0 {
		maxMatches = min(in.MaxCount, maxMatches)
	}
	mode := backend.GrepFiles
	if in.OutputMode == "content" || in.OutputMode == "count" {
		mode = backend.GrepContent
	}
	sctx, cancel := withLimit(ctx, lim.timeout())
	defer cancel()
	pattern := in.Pattern
	if !f.cfg.GrepRegexp {
		pattern = regexp.QuoteMeta(pattern)
	}
	// One match more than shown tells whether any were left out.
	q := backend.GrepQuery{Pattern: pattern, Path: p, Glob: in.Glob, Mode: mode, Limit: maxMatches + 1, MaxLineBytes: lim.maxLineBytes()}
	matches, err := f.cfg.Backend.Grep(sctx, q)
	if err != nil {
		switch {
		case errors.Is(err, backend.ErrInvalidPattern) && !errors.As(err, new(*syntax.Error)):
			return "", fmt.Errorf("Error: Invalid glob pattern: %s (%s)", clip.Text(in.Glob, 200), invalidPatternReason(err))
		case errors.Is(err, backend.ErrInvalidPattern):
			return "", errors.New("Invalid regex pattern: " + invalidPatternReason(err))
		case ctx.Err() != nil:
			return "", ctx.Err()
		case sctx.Err() != nil:
			return "", fmt.Errorf("Error: grep stopped after %v without finishing. Search a narrower path, add a glob, or use a pattern with a literal word in it.", lim.timeout())
		}
		return "", errors.New(backendErrorText(p, err))
	}
	if len(matches) == 0 {
		if !f.cfg.GrepRegexp && looksLikeRegexp(in.Pattern) {
			return noMatchesFound + regexpHint, nil
		}
		return noMatchesFound, nil
	}
	capped := len(matches) > maxMatches
	if capped {
		matches = matches[:maxMatches]
	}
	var b strings.Builder
	switch in.OutputMode {
	case "content":
		for i, m := range matches {
			if i == 0 || m.Path != matches[i-1].Path {
				if i > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(m.Path)
				b.WriteString(":\n")
			} else {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "  %d: %s", m.Line, strings.ToValidUTF8(m.Text, "\uFFFD"))
			if m.Cut {
				b.WriteString(lineCutMark)
			}
		}
	case "count":
		for i := 0; i < len(matches); {
			j := i
			for j < len(matches) && matches[j].Path == matches[i].Path {
				j++
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "%s: %d", matches[i].Path, j-i)
			i = j
		}
	default:
		for i, m := range matches {
			if i > 0 && m.Path == matches[i-1].Path {
				continue
			}
			if i > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(m.Path)
		}
	}
	out := capOutput(b.String(), f.evictChars())
	if capped {
		out += fmt.Sprintf(grepCappedNote, maxMatches)
		if maxMatches < lim.maxMatches() {
			out += fmt.Sprintf(grepRaiseNote, lim.maxMatches())
		}
	}
	return out, nil
}

// withLimit is ctx with a timeout, or ctx itself when d is not positive.
func withLimit(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, d)
}

// looksLikeRegexp reports whether a literal grep pattern carries strong
// signs of having been written as a regular expression ("a|b", ".*", "\d"),
// so that finding nothing is worth a hint. Single "." "(" or "[" are left
// out: literal code searches are full of them.
func looksLikeRegexp(p string) bool {
	if strings.Contains(p, "|") || strings.Contains(p, ".*") || strings.Contains(p, ".+") {
		return true
	}
	for i := 0; i+1 < len(p); i++ {
		if p[i] == '\\' && strings.IndexByte(`.wWdDsSbB(){}[]|+*?^$`, p[i+1]) >= 0 {
			return true
		}
	}
	return false
}

// invalidPatternReason extracts the regexp package's explanation from an
// invalid-pattern error.
func invalidPatternReason(err error) string {
	var pe *backend.PatternError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return strings.TrimPrefix(err.Error(), "error parsing regexp: ")
}

type executeIn struct {
	Command string `json:"command" jsonschema:"the shell command to run"`
	Timeout int    `json:"timeout,omitempty" jsonschema:"seconds before the command is killed (default: the backend's limit)"`
}

// timedOut is the line that says a command ran out of time: its limit,
// and what the model can do about it.
func timedOut(sb backend.Sandbox, asked, took time.Duration) string {
	def, most := backend.Limits(sb)
	limit := asked
	if limit <= 0 {
		limit = def
	}
	if most > 0 && limit > most {
		limit = most
	}
	if limit <= 0 {
		return "\n[Command timed out after " + took.Round(time.Second).String() + " and was killed]"
	}
	advice := "split the work into shorter commands"
	if most > limit {
		advice = "run it again with a longer timeout (up to " + seconds(most) + "), or " + advice
	}
	return "\n[Command timed out after " + seconds(limit) + " and was killed: " + advice + "]"
}

// seconds says d in whole seconds: "1 second", "120 seconds".
func seconds(d time.Duration) string {
	if n := int(d.Seconds()); n != 1 {
		return strconv.Itoa(n) + " seconds"
	}
	return "1 second"
}

func (f *Middleware) execute(ctx context.Context, in executeIn) (string, error) {
	sb, _ := f.sandbox()
	if strings.TrimSpace(in.Command) == "" {
		return "", errors.New("Error: command is empty")
	}
	if in.Timeout < 0 {
		return "", fmt.Errorf("Error: timeout must be non-negative, got %d.", in.Timeout)
	}
	// The backend lowers a timeout past its maximum; this only keeps a
	// huge number of seconds from overflowing into a negative duration.
	timeout := time.Duration(min(in.Timeout, math.MaxInt64/int(time.Second))) * time.Second
	start := time.Now()
	res, err := sb.Execute(ctx, in.Command, timeout)
	took := time.Since(start)
	if err != nil && !errors.Is(err, backend.ErrTimeout) {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("Error: executing command: %v", err)
	}
	var b strings.Builder
	b.WriteString(res.Output)
	if errors.Is(err, backend.ErrTimeout) {
		b.WriteString(timedOut(sb, timeout, took))
	}
	after := ""
	if took >= time.Second && !errors.Is(err, backend.ErrTimeout) {
		after = " after " + took.Round(time.Second).String() // how long it ran, when it is long enough to matter
	}
	if res.ExitCode == 0 && err == nil {
		b.WriteString("\n[Command succeeded with exit code 0" + after + "]")
	} else {
		fmt.Fprintf(&b, "\n[Command failed with exit code %d%s]", res.ExitCode, after)
	}
	if res.Truncated {
		b.WriteString("\n[Output was truncated due to size limits]")
	}
	return b.String(), nil
}
