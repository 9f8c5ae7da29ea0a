package mcpserve

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/mcp"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/server"
)

// The server's assistants over MCP, as the LangGraph Agent Server serves
// them: streamable HTTP at /mcp, stateless, each assistant a tool that
// takes run_task's arguments and answers its result (package mcp), so a
// host sees the contract of deepagents mcp-serve. A call is a run of the
// server's own, through launch: it shows in the LangGraph API, counts
// against MaxRuns, is refused on a busy thread and ends with its thread.

// mcpPath is where the assistants are served over MCP.
const mcpPath = "/mcp"

// maxMCPTools bounds the tools /mcp lists: the configured assistants
// first, then the created ones, oldest first. A host sends every tool's
// schema to its model with each request.
const maxMCPTools = 128

// maxToolName is the longest tool name MCP hosts and model providers
// take (OpenAI's and Anthropic's limit).
const maxToolName = 64

// maxToolDescription bounds a tool's description, in bytes: a created
// assistant's comes from a client.
const maxToolDescription = 2048

// maxQueuedProgress bounds the progress messages waiting for a host that
// reads slowly: beyond it they are dropped, so the run never waits for
// the host.
const maxQueuedProgress = 256

// The headers of MCP's streamable HTTP, for CORS, besides the LangGraph
// SDK's: a browser's MCP client sends the session and protocol version
// (and last-event-id, already allowed), and reads the session's ID.
var (
	mcpAllowHeaders  = []string{"mcp-session-id", "mcp-protocol-version"}
	mcpExposeHeaders = []string{"mcp-session-id", "mcp-protocol-version"}
)

// mcpSchemas keeps the tools' schemas, inferred once from run_task's
// types rather than for every tool of every request.
var mcpSchemas = sdk.NewSchemaCache()

// mcpServerKey is the request context's key of the MCP server built for
// the request.
type mcpServerKey struct{}

// Protocol serves a server's assistants over MCP at /mcp: list it in
// server.Config.Protocols.
type Protocol struct{}

// Mount implements server.Protocol.
func (Protocol) Mount(srv *server.Server, m *http.ServeMux) server.Mounted {
	s := &tools{srv: srv, cfg: srv.Config(), log: srv.Logger()}
	s.mcpRoutes(m)
	return server.Mounted{AllowHeaders: mcpAllowHeaders, ExposeHeaders: mcpExposeHeaders, Flags: []string{"mcp"}}
}

// host is what MCP uses of the server it is served by: its assistants,
// and its runs.
type host interface {
	Assistants(ctx context.Context, limit int) (configured, created []*langgraph.Assistant, err error)
	Launch(ctx context.Context, l server.Launch) (*server.Run, error)
	Saver() checkpoint.Saver
	// The background tasks' requests for approval.
	HasBackground() bool
	BackgroundApprovals(ctx context.Context, threadID string) ([]background.Approval, error)
	AnswerBackground(ctx context.Context, threadID, taskID string, decisions []agent.Decision) error
}

// backgroundOf is the server's background tasks as the MCP tools that
// list and answer their requests ask for them; nil without any.
func backgroundOf(h host) mcp.Background {
	if !h.HasBackground() {
		return nil
	}
	return hostBackground{h}
}

// hostBackground is a host as an mcp.Background.
type hostBackground struct{ h host }

func (b hostBackground) Approvals(ctx context.Context, threadID string) ([]background.Approval, error) {
	return b.h.BackgroundApprovals(ctx, threadID)
}

func (b hostBackground) Answer(ctx context.Context, threadID, taskID string, ds []agent.Decision) error {
	return b.h.AnswerBackground(ctx, threadID, taskID, ds)
}

// tools are a server's assistants as MCP tools.
type tools struct {
	srv host
	cfg server.Config
	log *slog.Logger
}

// mcpRoutes serves the assistants over MCP at /mcp.
func (s *tools) mcpRoutes(m *http.ServeMux) {
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		srv, _ := r.Context().Value(mcpServerKey{}).(*sdk.Server)
		return srv
	}, &sdk.StreamableHTTPOptions{
		// Stateless: no session to keep on one replica, or to lose with
		// it; every request is served on its own, by any replica.
		Stateless: true,
		// Protect, in front of every route, checks every request's Host
		// (DNS rebinding) whatever the connection. The SDK's own check
		// refuses a loopback connection naming a host that is not a
		// loopback one, so it would refuse the names Protect answers
		// through AllowedHosts and URL (a proxy on the same machine): it
		// is off when there are such names, as in deepagents mcp-serve,
		// and stays otherwise, a second check.
		DisableLocalhostProtection: len(s.cfg.AllowedHosts) > 0 || urlHost(s.cfg.URL) != "",
		Logger:                     s.log,
	})
	m.Handle(mcpPath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The SDK asks for the server more than once per request: it is
		// built once, with the assistants as they are now.
		ctx := context.WithValue(r.Context(), mcpServerKey{}, s.mcpServer(r))
		h.ServeHTTP(w, r.WithContext(ctx))
	}))
}

// urlHost is the host of a URL, "" for none.
func urlHost(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return u.Host
}

// mcpServer is the MCP server of one request: a tool per assistant.
func (s *tools) mcpServer(r *http.Request) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "deepagents", Version: "1"}, &sdk.ServerOptions{Logger: s.log, SchemaCache: mcpSchemas})
	bg := backgroundOf(s.srv)
	for _, t := range s.mcpTools(r.Context(), bg != nil) {
		sdk.AddTool(srv, &sdk.Tool{Name: t.name, Description: t.description}, s.mcpCall(r, t, bg))
	}
	if bg != nil {
		mcp.AddBackgroundTools(srv, bg)
	}
	return srv
}

// mcpTool is an assistant as a tool.
type mcpTool struct {
	name, description string
	assistantID       string
	// base is the name asked for (the graph ID, or a created
	// assistant's name); plain, whether it is a valid tool name as is.
	base  string
	plain bool
}

// mcpTools lists the assistants as tools, at most maxMCPTools: the
// configured ones, then those clients created, oldest first. Names are
// made of what hosts and providers accept ([A-Za-z0-9_-], at most 64);
// a configured assistant whose graph ID is such a name keeps it, and a
// name taken gets a suffix from the assistant's ID, the same on every
// request and replica.
//
// With background subagents, the names of the tools that list and answer
// their requests are taken before any assistant's.
func (s *tools) mcpTools(ctx context.Context, background bool) []mcpTool {
	var tools []mcpTool
	configured, created, err := s.srv.Assistants(ctx, 1000)
	if err != nil {
		s.log.Warn("server: listing the created assistants for MCP", "err", err)
	}
	for _, a := range configured {
		desc := ""
		if a.Description != nil {
			desc = *a.Description
		}
		tools = append(tools, newMCPTool(a.GraphID, a.AssistantID, desc))
	}
	for _, wa := range created {
		if len(tools) == maxMCPTools {
			break
		}
		desc := ""
		if wa.Description != nil {
			desc = *wa.Description
		}
		tools = append(tools, newMCPTool(wa.Name, wa.AssistantID, desc))
	}
	tools = tools[:min(len(tools), maxMCPTools)]
	taken := map[string]bool{}
	if background {
		taken[mcp.ListBackgroundApprovalsTool], taken[mcp.AnswerBackgroundApprovalTool] = true, true
	}
	// Configured assistants named plainly first: they keep their names.
	for i := range tools {
		if t := &tools[i]; t.plain && i < len(configured) && !taken[t.base] {
			t.name = t.base
			taken[t.name] = true
		}
	}
	for i := range tools {
		if t := &tools[i]; t.name == "" {
			t.name = uniqueToolName(toolName(t.base), t.assistantID, taken)
			taken[t.name] = true
		}
	}
	return tools
}

func newMCPTool(base, assistantID, description string) mcpTool {
	if description == "" {
		description = fmt.Sprintf("Hands a task to the deep agent %s (planning, files, subagents) and returns its answer and the thread_id. "+
			"Pass thread_id to continue a thread. If the run stops for approval of tool calls, call again with the thread_id and a decision.", base)
	}
	return mcpTool{description: clip.Prefix(description, maxToolDescription), assistantID: assistantID, base: base, plain: toolName(base) == base}
}

// toolName makes s a tool name: each character but [A-Za-z0-9_-] an
// underscore, at most maxToolName long.
func toolName(s string) string {
	if s == "" {
		return "assistant"
	}
	b := make([]byte, 0, min(len(s), maxToolName))
	for _, c := range s {
		if len(b) == maxToolName {
			break
		}
		if c == '_' || c == '-' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || ('0' <= c && c <= '9') {
			b = append(b, byte(c))
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

// uniqueToolName returns name, or when it is taken name with a suffix of
// the assistant's ID: its first 8 characters when it is a UUID (as the
// server makes them, so that a reader finds the assistant), a hash of it
// otherwise, and a number after that if need be.
func uniqueToolName(name, assistantID string, taken map[string]bool) string {
	if !taken[name] {
		return name
	}
	suffix := assistantID
	if !isUUID(assistantID) {
		h := sha256.Sum256([]byte(assistantID))
		suffix = hex.EncodeToString(h[:])
	}
	suffix = suffix[:8]
	for n := 1; ; n++ {
		end := "_" + suffix
		if n > 1 {
			end += "_" + strconv.Itoa(n)
		}
		if c := name[:min(len(name), maxToolName-len(end))] + end; !taken[c] {
			return c
		}
	}
}

// isUUID reports whether s is a UUID in its canonical form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i, c := range []byte(s) {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// mcpCall is the handler of an assistant's tool, for the request r (whose
// end, the host gone, cancels the run, and whose trace the run continues
// through Config.RunContext).
func (s *tools) mcpCall(r *http.Request, t mcpTool, bg mcp.Background) sdk.ToolHandlerFor[mcp.RunTaskInput, mcp.RunTaskOutput] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in mcp.RunTaskInput) (*sdk.CallToolResult, mcp.RunTaskOutput, error) {
		d, err := in.Decide()
		if err != nil {
			return nil, mcp.RunTaskOutput{}, err
		}
		if in.ThreadID != "" {
			if p := server.IDProblem(in.ThreadID); p != "" {
				// As the LangGraph API answers it.
				return nil, mcp.RunTaskOutput{}, fmt.Errorf("Invalid thread ID: %s", p) //nolint:staticcheck // the LangGraph API's words
			}
		}
		q := langgraph.RunCreate{AssistantID: t.assistantID}
		ask := server.Launch{ThreadID: in.ThreadID, Request: &q, From: r}
		switch {
		case d != nil:
			// One decision: launch gives it to every call that waits.
			resume, err := json.Marshal(map[string][]agent.Decision{"decisions": {*d}})
			if err != nil {
				return nil, mcp.RunTaskOutput{}, err
			}
			q.Command = &langgraph.Command{Resume: resume}
		case in.ThreadID == "":
			// A new thread, kept: the host continues it with its
			// thread_id, and decides on approvals on it.
			q.OnCompletion = langgraph.OnCompletionKeep
			ask.Messages = []llm.Message{llm.UserText(in.Task)}
		default:
			q.IfNotExists = langgraph.IfNotExistsCreate
			ask.Messages = []llm.Message{llm.UserText(in.Task)}
		}
		w := &mcpWatch{progress: mcp.NewProgress(req), wake: make(chan struct{}, 1)}
		ask.Tap = w.tap
		rn, err := s.srv.Launch(ctx, ask)
		if err != nil {
			return nil, mcp.RunTaskOutput{}, err
		}
		for {
			select {
			case <-rn.Done():
				w.flush(ctx)
				res, out := s.mcpEnd(ctx, rn, w).Result(t.name)
				mcp.WithBackgroundApprovals(ctx, bg, res, &out)
				return res, out, nil
			case <-w.wake:
				w.flush(ctx)
			case <-ctx.Done():
				// The SDK ended the call. Stateless, a host's
				// notifications/cancelled comes in a request of its own
				// and reaches no call: the end of the call's request,
				// below, is how a host cancels.
				rn.Cancel()
				return nil, mcp.RunTaskOutput{}, context.Cause(ctx)
			case <-r.Context().Done():
				// The host went away (a closed client), or cancelled the
				// call by ending its request (the Go SDK does). Watched
				// here, for every protocol version: the SDK ends the
				// call's context with its request only for the
				// sessionless one, and only when asked
				// (PropagateRequestCancellation).
				rn.Cancel()
				return nil, mcp.RunTaskOutput{}, errors.New("the call's request ended: its run was cancelled")
			}
		}
	}
}

// mcpEnd is how a finished run ended, as its call answers it.
func (s *tools) mcpEnd(ctx context.Context, rn *server.Run, w *mcpWatch) mcp.TaskEnd {
	te := mcp.TaskEnd{ThreadID: rn.ThreadID(), Answer: w.answer}
	switch rn.Status() {
	case langgraph.RunSuccess:
		te.Status = agent.StatusCompleted
		return te
	case langgraph.RunInterrupted:
		if w.end.Status != agent.StatusInterrupted {
			// Cancelled: its thread deleted, a run that interrupted it.
			te.Status, te.Error = agent.StatusFailed, "the run was cancelled"
			return te
		}
		te.Status, te.Pending = agent.StatusInterrupted, w.end.Interrupts
		if len(te.Pending) == 0 {
			if snap, err := s.srv.Saver().Load(ctx, rn.ThreadID(), ""); err == nil {
				te.Pending, _ = agent.PendingRequests(snap.Meta)
			}
		}
		return te
	}
	te.Status, te.Error = agent.StatusFailed, cmp.Or(rn.Failure(), w.end.Error, "the run failed")
	return te
}

// mcpWatch follows a call's run from its tap, on the run's goroutine: it
// keeps the answer and the end, and queues the progress messages that the
// call's goroutine sends (the tap must not wait for the host).
type mcpWatch struct {
	progress *mcp.Progress
	// answer and end are written by the tap and read once the run has
	// finished.
	answer string
	end    agent.Event

	mu    sync.Mutex
	queue []string
	wake  chan struct{} // one waiting signal: messages are queued
}

func (w *mcpWatch) tap(e *agent.Event) {
	if text, ok := mcp.Answer(e); ok {
		w.answer = text
	}
	if e.Type == agent.EventRunEnd && len(e.Namespace) == 0 {
		w.end = *e
	}
	if !w.progress.Wanted() {
		return
	}
	msg := mcp.ProgressMessage(e)
	if msg == "" {
		return
	}
	w.mu.Lock()
	if len(w.queue) < maxQueuedProgress {
		w.queue = append(w.queue, msg)
	}
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// flush sends the queued progress messages, in order.
func (w *mcpWatch) flush(ctx context.Context) {
	w.mu.Lock()
	q := w.queue
	w.queue = nil
	w.mu.Unlock()
	for _, msg := range q {
		w.progress.Notify(ctx, msg)
	}
}
