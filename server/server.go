package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/middleware/subagents/background"
	"github.com/deepagents-go/deepagents/store"
)

// Assistant is an agent the server offers, under a graph ID (LangGraph's
// name for an agent definition).
type Assistant struct {
	// GraphID names the assistant; clients may use it wherever an
	// assistant ID goes. The assistant's ID is derived from it, so it is
	// stable across restarts.
	GraphID     string
	Name        string // defaults to GraphID
	Description string
	// Agent runs the assistant's threads. Its Checkpointer must be the
	// server's Saver.
	Agent *agent.Agent
}

// Config configures a Server.
type Config struct {
	// Assistants are the agents served; at least one.
	Assistants []Assistant
	// Saver holds the threads; it must be the Checkpointer of every
	// assistant's agent.
	Saver checkpoint.Saver
	// RunContext, when set, derives a run's context from the request that
	// started it (the run outlives the request): telemetry.ContinueTrace
	// continues the caller's trace, as deepagents serve does.
	RunContext func(ctx context.Context, r *http.Request) context.Context
	// APIKey, when set, must be sent as X-Api-Key (or as a bearer token)
	// with every request but GET /ok and CORS preflights. Unset, any key
	// (or none) is accepted, as the Deep Agents UI sends an empty one: a
	// server without a key should listen on loopback only, as deepagents
	// serve insists.
	APIKey string
	// AllowedOrigins are the origins whose pages may call the server from
	// a browser (see Access.AllowedOrigins); nil means
	// DefaultAllowedOrigins, the loopback origins a local Deep Agents UI
	// runs on. A request from any other page is refused (403) before it
	// is read.
	AllowedOrigins []string
	// AllowedHosts are the host names clients may reach the server by
	// besides localhost, IP addresses and URL's host (see
	// Access.AllowedHosts); a request naming another (DNS rebinding) is
	// refused (403).
	AllowedHosts []string
	// ProtectedValues are state values clients may read but never write:
	// POST /threads/{id}/state and a run's input refuse them (422), as
	// they refuse the values private to an agent. They are what governs
	// how a thread runs when a program continues it outside the server
	// (deepagents serve protects the CLI's settings of a thread: its
	// sandbox, approvals, rules and workspace).
	ProtectedValues []string
	// MaxRuns bounds the runs executing at once; further runs wait
	// (status pending). Zero means DefaultMaxRuns.
	MaxRuns int
	// Heartbeat is the interval of the comment lines that keep a stream
	// alive through proxies; zero means DefaultHeartbeat.
	Heartbeat time.Duration
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Store, when set, is shared by every server (replica) on the same
	// database: the database's store. It also keeps thread metadata set
	// after a thread's creation and assistants created by clients (in
	// memory without it). Runs are recorded there, so that a
	// run started through one replica can be read, joined, streamed and
	// cancelled through any other, which forwards the request to the
	// replica executing it; a replica that stops has its unfinished runs
	// marked failed by the others.
	Store store.Store
	// URL is where the other replicas reach this one (http://host:port);
	// required with Store.
	URL string
	// Protocols are served beside the LangGraph API, on its runs and
	// behind its access checks: a2aserve.Protocol (each assistant an A2A
	// agent), mcpserve.Protocol (the assistants as MCP tools at /mcp).
	Protocols []Protocol
}

// Defaults of Config.
const (
	DefaultMaxRuns   = 64
	DefaultHeartbeat = 10 * time.Second
)

// Server serves the LangGraph API. Create it with New; Close cancels the
// runs in flight.
type Server struct {
	cfg        Config
	assistants []*assistantEntry
	mux        *http.ServeMux
	log        *slog.Logger
	runs       *runs
	slots      chan struct{}
	baseCtx    context.Context
	stop       context.CancelFunc
	wg         sync.WaitGroup
	// closeMu orders goroutines joining wg with Close's Wait: after
	// Close, no run starts.
	closeMu   sync.Mutex
	closed    bool
	replicaID string
	// store keeps what the Saver does not: thread metadata set after a
	// thread's creation, assistants created by clients. Config.Store, or
	// one in memory.
	store store.Store
	// handler is the routes behind the access checks.
	handler http.Handler
	crons   cronScheduler
	// mounted are the Config's Protocols, as they serve this server.
	mounted []Mounted
	// bg are the assistants' background subagents' middleware, whose
	// parked tasks' requests show on their threads (background.go).
	bg []*background.Middleware
}

// New returns a server for cfg.
func New(cfg Config) (*Server, error) {
	if len(cfg.Assistants) == 0 {
		return nil, errors.New("server: no assistant")
	}
	if cfg.Saver == nil {
		return nil, errors.New("server: no Saver")
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, log: log, runs: newRuns(), slots: make(chan struct{}, cfg.MaxRuns), baseCtx: ctx, stop: stop}
	seen := map[string]bool{}
	for _, a := range cfg.Assistants {
		if a.GraphID == "" || a.Agent == nil {
			return nil, errors.New("server: an assistant needs a GraphID and an Agent")
		}
		if seen[a.GraphID] {
			return nil, fmt.Errorf("server: two assistants named %q", a.GraphID)
		}
		seen[a.GraphID] = true
		if a.Agent.Checkpointer() != cfg.Saver {
			return nil, fmt.Errorf("server: assistant %q: its agent's Checkpointer is not the server's Saver", a.GraphID)
		}
		s.assistants = append(s.assistants, newAssistantEntry(a))
	}
	s.bg = backgroundOf(s.assistants)
	s.store = cfg.Store
	if s.store == nil {
		s.store = store.NewMemoryStore()
	}
	s.routes()
	hosts := cfg.AllowedHosts
	if u, err := url.Parse(cfg.URL); err == nil && u.Host != "" {
		// Other replicas reach this one by its URL.
		hosts = append(slices.Clip(hosts), u.Host)
	}
	var err error
	if s.handler, err = Protect(checkIDs(s.mux), Access{APIKey: cfg.APIKey, AllowedOrigins: cfg.AllowedOrigins, AllowedHosts: hosts, Open: []string{langgraph.PathOK},
		// The LangGraph SDK's headers, and the protocols'.
		AllowHeaders:  s.headers(defaultAllowHeaders, func(m Mounted) []string { return m.AllowHeaders }),
		ExposeHeaders: s.headers(defaultExposeHeaders, func(m Mounted) []string { return m.ExposeHeaders })}); err != nil {
		return nil, err
	}
	if cfg.Store != nil {
		if cfg.URL == "" {
			return nil, errors.New("server: a shared Store needs the URL other replicas reach this one at")
		}
		s.replicaID = newUUID()
		s.forgetPrevious()
		s.beat()
		s.wg.Add(1)
		go s.heartbeat()
	}
	s.startCrons()
	return s, nil
}

// ServeHTTP implements http.Handler: the routes behind the checks of the
// Config's Access (origin, host, key, content type).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// Close cancels the runs in flight and waits for them to end.
func (s *Server) Close() error {
	s.closeMu.Lock()
	s.closed = true
	s.closeMu.Unlock()
	s.stop()
	s.wg.Wait()
	return nil
}

// goRun starts f as one of the server's goroutines, unless the server is
// closed.
func (s *Server) goRun(f func()) bool {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

func (s *Server) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET "+langgraph.PathOK, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, map[string]bool{"ok": true}) })
	m.HandleFunc("GET "+langgraph.PathInfo, s.info)

	// Each part of the API registers its routes beside its handlers.
	s.assistantRoutes(m)
	s.threadRoutes(m)
	s.runRoutes(m)
	s.storeRoutes(m)
	s.cronRoutes(m)
	for _, p := range s.cfg.Protocols {
		s.mounted = append(s.mounted, p.Mount(s, m))
	}
	s.mux = m
}

// headers are the headers of the LangGraph SDK (base) and of the
// protocols mounted, for CORS.
func (s *Server) headers(base []string, of func(Mounted) []string) []string {
	h := slices.Clone(base)
	for _, m := range s.mounted {
		h = append(h, of(m)...)
	}
	return h
}

func (s *Server) info(w http.ResponseWriter, r *http.Request) {
	flags := map[string]bool{"assistants": true, "crons": true, "langsmith": false, "mcp": false}
	for _, m := range s.mounted {
		for _, f := range m.Flags {
			flags[f] = true
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"version": "deepagents-go", "flags": flags})
}

// maxBody bounds a request body: requests carry messages and files, not
// uploads.
const maxBody = 32 << 20

// readJSON decodes the request body into v; an empty body leaves v as it
// is. It writes the error response and returns false on failure.
func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			httpError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request body larger than %d bytes", maxBody))
		} else {
			httpError(w, http.StatusBadRequest, "Could not read the request body")
		}
		return false
	}
	if len(b) == 0 {
		return true
	}
	if err := json.Unmarshal(b, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			validationError(w, typeErr.Field, fmt.Sprintf("Expected %s, received %s", typeErr.Type, typeErr.Value))
		} else {
			// 422, as docs/server.md says: the body was read, but is
			// not what the endpoint takes.
			httpError(w, http.StatusUnprocessableEntity, "Malformed JSON in request body")
		}
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		httpError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

// httpError answers as LangGraph's JavaScript server does: the status and
// the message as plain text.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	io.WriteString(w, msg)
}

// validationError answers a request whose JSON is well formed but not
// what the endpoint takes, as the reference server's validator does: 422
// with the issue, at path (dotted), in its error shape.
func validationError(w http.ResponseWriter, path, msg string) {
	var p []string
	if path != "" {
		p = strings.Split(path, ".")
	}
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
		"success": false,
		"error": map[string]any{
			"name":   "ZodError",
			"issues": []map[string]any{{"code": "invalid_type", "path": p, "message": msg}},
		},
	})
}

// thread looks a request's thread up, answering (404 for a missing one)
// when it cannot.
func (s *Server) thread(w http.ResponseWriter, r *http.Request, tid string) (*checkpoint.Thread, bool) {
	th, err := s.cfg.Saver.Thread(r.Context(), tid)
	if err != nil {
		storageError(w, tid, err)
		return nil, false
	}
	return th, true
}

// storageError answers a Saver error.
func storageError(w http.ResponseWriter, threadID string, err error) {
	storageRefusal(threadID, err).write(w)
}
