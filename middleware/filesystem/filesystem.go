// Package filesystem is the filesystem middleware: the file tools ls,
// read_file, write_file, edit_file, glob and grep over a backend, execute
// when the backend is a sandbox, and the eviction of oversized tool
// results into files. The texts the model reads of them are the contract
// the references define (fsformat.go).
package filesystem

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/tool"
)

// Filesystem tool names.
const (
	LsTool        = "ls"
	ReadFileTool  = "read_file"
	WriteFileTool = "write_file"
	EditFileTool  = "edit_file"
	MultiEditTool = "multi_edit"
	GlobTool      = "glob"
	GrepTool      = "grep"
	ExecuteTool   = "execute"
)

// Defaults of the filesystem middleware.
const (
	// DefaultEvictChars is the size above which a tool result is moved to
	// /large_tool_results/: 4 characters a token times 20,000 tokens.
	DefaultEvictChars = 80000
	// LargeResultsDir is where evicted results are written.
	LargeResultsDir = "/large_tool_results/"
	// DefaultReadLimit is read_file's default number of lines.
	DefaultReadLimit = 2000
)

// Config configures the filesystem middleware.
type Config struct {
	// Backend holds the files the tools work on; a backend.Sandbox adds
	// execute. Required.
	Backend backend.Backend
	// Prompt replaces the system prompt section when set.
	Prompt string
	// Descriptions replaces tool descriptions, by tool name.
	Descriptions map[string]string
	// AllowedPrefixes, when set, confines every path argument to these
	// prefixes (such as "/workspace/").
	AllowedPrefixes []string
	// EvictChars is the size above which a result of a tool other than the
	// file tools is saved to /large_tool_results/ and replaced by a pointer
	// to it; zero means DefaultEvictChars, negative disables eviction.
	// The file tools cap their own output at the same size instead.
	EvictChars int
	// Grep bounds the grep tool; its zero value means the defaults.
	Grep GrepLimits
	// GrepRegexp makes grep's pattern an RE2 regular expression instead of
	// the literal text the references search for.
	GrepRegexp bool
	// GlobTimeout stops a glob that runs longer, with an error to the
	// model; zero means DefaultGlobTimeout, negative no limit.
	GlobTimeout time.Duration
	// MultiEdit offers multi_edit: several edits of one file in one call,
	// all made or none. The references have no such tool, so it is off
	// unless asked for.
	MultiEdit bool
}

// Middleware gives the agent the file tools ls, read_file, write_file,
// edit_file, glob and grep over a backend, plus execute when the backend is
// a backend.Sandbox and multi_edit when Config.MultiEdit asks for it. It also moves oversized tool results into files so
// they do not flood the context.
type Middleware struct {
	cfg   Config
	tools []tool.Tool
	locks pathLocks
}

// Defaults of GrepLimits.
const (
	DefaultGrepMaxPatternBytes = 1000
	DefaultGrepTimeout         = 30 * time.Second
	DefaultGrepMaxMatches      = 1000
	DefaultGrepMaxLineBytes    = 500
	// DefaultGlobTimeout is how long one glob may walk.
	DefaultGlobTimeout = 20 * time.Second
)

func (f *Middleware) globTimeout() time.Duration {
	return cmp.Or(f.cfg.GlobTimeout, DefaultGlobTimeout)
}

// GrepLimits bounds what one grep call may cost, whatever the model asks.
// Zero fields mean the defaults.
type GrepLimits struct {
	// MaxPatternBytes is the longest pattern accepted; a longer one is
	// refused with an error to the model.
	MaxPatternBytes int
	// Timeout stops a search that runs longer, with an error to the model
	// that says to narrow it; negative means no limit. The other limits
	// cannot be turned off: zero or negative means their default.
	Timeout time.Duration
	// MaxMatches is the most matching lines (or files, in
	// files_with_matches mode) reported; the search stops when it has
	// found them and the result says it was capped.
	MaxMatches int
	// MaxLineBytes is the most of a matching line shown in content mode;
	// the rest of a longer line is cut and marked.
	MaxLineBytes int
}

func (l GrepLimits) maxPatternBytes() int {
	return orDefault(l.MaxPatternBytes, DefaultGrepMaxPatternBytes)
}
func (l GrepLimits) timeout() time.Duration { return cmp.Or(l.Timeout, DefaultGrepTimeout) }
func (l GrepLimits) maxMatches() int        { return orDefault(l.MaxMatches, DefaultGrepMaxMatches) }
func (l GrepLimits) maxLineBytes() int      { return orDefault(l.MaxLineBytes, DefaultGrepMaxLineBytes) }

// orDefault is v, or def when v is zero or negative.
func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// New returns the filesystem middleware. It fails without a Backend, or
// if a tool's schema cannot be built.
func New(cfg Config) (*Middleware, error) {
	if cfg.Backend == nil {
		return nil, errors.New("filesystem: Config.Backend is required")
	}
	f := &Middleware{cfg: cfg}
	tools, err := f.newTools()
	if err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	f.tools = tools
	return f, nil
}

// Backend returns the backend the tools work on.
func (f *Middleware) Backend() backend.Backend { return f.cfg.Backend }

// Name implements agent.Middleware.
func (f *Middleware) Name() string { return "filesystem" }

// Prompt is the default system prompt section.
const Prompt = `## Files

You have a filesystem; paths are absolute and start with /. Use files to keep large context out of the conversation: save notes, drafts and intermediate results, and read back only the parts you need.`

// ExecutePrompt is added to the prompt section when execute is available.
const ExecutePrompt = `- execute runs a shell command in the workspace and returns its output and exit code. Prefer the file tools for reading and searching files.`

// fileToolLines describe one file tool each, for a prompt offering only
// some of them (see SystemPromptFor), in the order they are offered.
var fileToolLines = []struct{ tool, line string }{
	{LsTool, "- ls lists a directory."},
	{GlobTool, `- glob finds files by name pattern ("*.go" at any depth, "src/**/*.ts" below a folder).`},
	{GrepTool, "- grep searches file contents."},
	{ReadFileTool, "- read_file reads a file; page through long files with offset and limit instead of reading everything."},
	{EditFileTool, "- edit_file replaces an exact string; include enough surrounding text to make it unique, or set replace_all. Read a file before you edit it."},
	{WriteFileTool, "- write_file creates a file or replaces a whole one. Use files to keep large context out of the conversation: save notes, drafts and intermediate results, and read back only the parts you need."},
	{ExecuteTool, "- execute runs a shell command in the workspace and returns its output and exit code."},
}

// SystemPromptFor implements agent.ToolPrompter: with every tool offered
// it is SystemPrompt; otherwise it describes only the offered tools, and
// nothing when none is.
func (f *Middleware) SystemPromptFor(offered func(string) bool) string {
	if f.cfg.Prompt != "" {
		return f.cfg.Prompt
	}
	all, some := true, false
	for _, t := range f.Tools() {
		name := t.Spec().Name
		all = all && offered(name)
		some = some || offered(name)
	}
	switch {
	case all:
		return f.SystemPrompt()
	case !some:
		return ""
	}
	var b strings.Builder
	b.WriteString("## Files\n\nYou have a filesystem. Paths are absolute and start with /. Your file tools:\n")
	for _, l := range fileToolLines {
		if offered(l.tool) {
			b.WriteString("\n" + l.line)
		}
	}
	return b.String()
}

// SystemPrompt implements agent.SystemPrompter.
func (f *Middleware) SystemPrompt() string {
	if f.cfg.Prompt != "" {
		return f.cfg.Prompt
	}
	if _, ok := f.sandbox(); ok {
		return Prompt + "\n" + ExecutePrompt
	}
	return Prompt
}

func (f *Middleware) sandbox() (backend.Sandbox, bool) {
	s, ok := f.cfg.Backend.(backend.Sandbox)
	return s, ok
}

func (f *Middleware) evictChars() int { return cmp.Or(f.cfg.EvictChars, DefaultEvictChars) }

func (f *Middleware) describe(name, def string) string {
	if d, ok := f.cfg.Descriptions[name]; ok {
		return d
	}
	return def
}

// Tools implements agent.ToolProvider.
func (f *Middleware) Tools() []tool.Tool { return f.tools }

// toolTraits are what the tools declare of themselves: the readers change
// nothing and show files from their path argument; write_file and
// edit_file change files through the backend alone, which reports each
// change; execute runs a command, which may do anything.
var toolTraits = map[string]tool.Traits{
	LsTool:        {ReadOnly: true, ReadsFiles: true},
	ReadFileTool:  {ReadOnly: true, ReadsFiles: true},
	GlobTool:      {ReadOnly: true, ReadsFiles: true},
	GrepTool:      {ReadOnly: true, ReadsFiles: true},
	WriteFileTool: {EditsFiles: true},
	EditFileTool:  {EditsFiles: true},
	MultiEditTool: {EditsFiles: true},
	ExecuteTool:   {RunsCommands: true},
}

// toolNames are the tools of toolTraits in the order the middleware
// offers them.
var toolNames = []string{LsTool, ReadFileTool, WriteFileTool, EditFileTool, MultiEditTool, GlobTool, GrepTool, ExecuteTool}

// ToolNames returns the names of every tool the middleware may offer (some
// only when configured: execute, multi_edit), in the order it offers them.
func ToolNames() []string { return slices.Clone(toolNames) }

// ToolTraits returns what the middleware's tool of that name declares it
// does, and whether the middleware has such a tool (execute only with a
// sandbox): for those who know a call by its name alone, an agent's
// [agent.Agent.ToolTraits] being the way for the others.
func ToolTraits(name string) (tool.Traits, bool) {
	tr, ok := toolTraits[name]
	return tr, ok
}

// newTools builds the tools once, for every agent that shares the
// middleware.
func (f *Middleware) newTools() ([]tool.Tool, error) {
	var set tool.Set // every tool is built, and every failure reported
	set.Add(tool.New(LsTool, f.describe(LsTool, lsDescription), f.ls, tool.WithTraits(toolTraits[LsTool])))
	set.Add(tool.New(ReadFileTool, f.describe(ReadFileTool, readDescription), f.read, tool.WithTraits(toolTraits[ReadFileTool]), tool.WithSchemaFunc(func(s *jsonschema.Schema) {
		s.Properties["offset"].Default = []byte("0")
		s.Properties["limit"].Default = []byte(strconv.Itoa(DefaultReadLimit))
	})))
	set.Add(tool.New(WriteFileTool, f.describe(WriteFileTool, writeDescription), f.write, tool.WithTraits(toolTraits[WriteFileTool])))
	set.Add(tool.New(EditFileTool, f.describe(EditFileTool, editDescription), f.edit, tool.WithTraits(toolTraits[EditFileTool]), tool.WithSchemaFunc(func(s *jsonschema.Schema) {
		s.Properties["replace_all"].Default = []byte("false")
	})))
	if f.cfg.MultiEdit {
		set.Add(tool.New(MultiEditTool, f.describe(MultiEditTool, multiEditDescription), f.multiEdit, tool.WithTraits(toolTraits[MultiEditTool]), tool.WithSchemaFunc(func(s *jsonschema.Schema) {
			s.Properties["edits"].MinItems = jsonschema.Ptr(1)
			s.Properties["edits"].MaxItems = jsonschema.Ptr(maxEdits)
			s.Properties["edits"].Items.Properties["replace_all"].Default = []byte("false")
		})))
	}
	set.Add(tool.New(GlobTool, f.describe(GlobTool, globDescription), f.glob, tool.WithTraits(toolTraits[GlobTool]), tool.WithSchemaFunc(func(s *jsonschema.Schema) {
		s.Properties["path"].Default = []byte(`"/"`)
	})))
	set.Add(tool.New(GrepTool, f.describe(GrepTool, f.grepDescription()), f.grep, tool.WithTraits(toolTraits[GrepTool]), tool.WithSchemaFunc(func(s *jsonschema.Schema) {
		if f.cfg.GrepRegexp {
			s.Properties["pattern"].Description = "regular expression to search for (RE2 syntax)"
		}
		s.Properties["max_count"].Minimum = jsonschema.Ptr(1.0)
		s.Properties["path"].Default = []byte(`"/"`)
		s.Properties["output_mode"].Enum = []any{"files_with_matches", "content", "count"}
		s.Properties["output_mode"].Default = []byte(`"files_with_matches"`)
	})))
	if _, ok := f.sandbox(); ok {
		set.Add(tool.New(ExecuteTool, f.describe(ExecuteTool, f.executeDescription()), f.execute, tool.WithTraits(toolTraits[ExecuteTool])))
	}
	return set.Tools()
}

// executeDescription says the sandbox's timeouts, when it tells them.
func (f *Middleware) executeDescription() string {
	sb, _ := f.sandbox()
	def, most := backend.Limits(sb)
	if def <= 0 || most <= 0 {
		return executeDescription
	}
	return executeRun + " timeout (seconds) overrides the default limit of " + seconds(def) + ", up to " + seconds(most) + ". " + executeAvoid
}

func (f *Middleware) grepDescription() string {
	if f.cfg.GrepRegexp {
		return grepRegexpDescription
	}
	return grepDescription
}

// fileTool reports whether the tool of that name works on files by path:
// those that read or edit them (the table's, execute aside). Their output
// is what the model asked for, capped by the tools themselves instead of
// evicted.
func fileTool(name string) bool {
	tr := toolTraits[name]
	return tr.ReadsFiles || tr.EditsFiles
}

// WrapTool implements agent.ToolWrapper: writes to one path are serialised,
// and oversized results of other tools are moved into files.
func (f *Middleware) WrapTool(ctx context.Context, req *agent.ToolRequest, next agent.ToolHandler) (agent.ToolResult, error) {
	if fileTool(req.Call.Name) {
		return next(ctx, req)
	}
	res, err := next(ctx, req)
	if err != nil || f.evictChars() < 0 || len(res.Content) <= f.evictChars() {
		return res, err
	}
	return f.evict(ctx, req.Call.ID, res), nil
}

// evict writes a large result to a file and returns a pointer to it.
func (f *Middleware) evict(ctx context.Context, callID string, res agent.ToolResult) agent.ToolResult {
	id := strings.NewReplacer(".", "_", "/", "_", `\`, "_").Replace(callID)
	if id == "" {
		id = strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	path := LargeResultsDir + id
	out := f.cfg.Backend.Upload(ctx, []backend.File{{Path: path, Content: []byte(res.Content)}})
	if len(out) != 1 || out[0].Err != nil {
		// Better a clipped result than a lost one.
		res.Content = capOutput(res.Content, f.evictChars())
		return res
	}
	lines := strings.Split(strings.TrimRight(res.Content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "Tool result too large (%d characters, %d lines), so it was saved to %s.\n", len(res.Content), len(lines), path)
	b.WriteString("Read it with read_file, paging through it with offset and limit; use grep on it to find specific parts.\n\n")
	if len(lines) <= 10 {
		b.WriteString("Preview:\n")
		formatLines(&b, clipLines(lines), 1)
	} else {
		b.WriteString("Preview (first 5 and last 5 lines):\n")
		formatLines(&b, clipLines(lines[:5]), 1)
		b.WriteString("\n...\n")
		formatLines(&b, clipLines(lines[len(lines)-5:]), len(lines)-4)
	}
	return agent.ToolResult{Content: b.String(), IsError: res.IsError, Parts: res.Parts}
}

// clipLines shortens preview lines so a preview stays small.
func clipLines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) > 1000 {
			l = l[:clip.RuneOffset(l, 1000)] + "…"
		}
		out[i] = l
	}
	return out
}

// pathLocks serialises writes to the same path across concurrent calls.
type pathLocks struct {
	mu    sync.Mutex
	locks map[string]*pathLock
}

type pathLock struct {
	sync.Mutex
	users int
}

func (p *pathLocks) lock(path string) func() {
	p.mu.Lock()
	if p.locks == nil {
		p.locks = make(map[string]*pathLock)
	}
	l := p.locks[path]
	if l == nil {
		l = &pathLock{}
		p.locks[path] = l
	}
	l.users++
	p.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		p.mu.Lock()
		if l.users--; l.users == 0 {
			delete(p.locks, path)
		}
		p.mu.Unlock()
	}
}

// AfterModel implements agent.AfterModelHook: a call of a file tool whose
// path the contract refuses (a "..", a "~", a Windows drive, a path
// outside AllowedPrefixes) gets the contract's error at once, without
// running. The files come before approvals in the stack: no rule, mode,
// hook or approval is asked about a path no tool would take, nor gives
// its own reason for refusing it.
func (f *Middleware) AfterModel(_ context.Context, turn *agent.Turn) error {
	for _, call := range turn.Message.ToolCalls {
		if !fileTool(call.Name) {
			continue
		}
		var in struct {
			FilePath *string `json:"file_path"`
			Path     *string `json:"path"`
		}
		if json.Unmarshal(call.Args, &in) != nil {
			continue // the tool's validator answers
		}
		p := in.FilePath // read_file, write_file, edit_file
		if call.Name == LsTool || call.Name == GlobTool || call.Name == GrepTool {
			p = in.Path
		}
		if p == nil {
			continue
		}
		if _, err := f.clean(*p); err != nil {
			turn.Answer(call.ID, agent.ToolResult{Content: err.Error(), IsError: true})
		}
	}
	return nil
}

// clean validates a path argument; the error is the text for the model.
func (f *Middleware) clean(p string) (string, error) {
	c, err := backend.Clean(p)
	if err != nil {
		var pe *backend.PathError
		errors.As(err, &pe)
		return "", errors.New(pathErrorText(p, pe.Err))
	}
	if len(f.cfg.AllowedPrefixes) > 0 && !slices.ContainsFunc(f.cfg.AllowedPrefixes, func(pre string) bool {
		return strings.HasPrefix(c, pre) || c+"/" == pre
	}) {
		return "", errors.New(prefixErrorText(p, f.cfg.AllowedPrefixes))
	}
	return c, nil
}
