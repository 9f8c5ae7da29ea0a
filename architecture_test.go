package deepagents_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/deepagents-go/deepagents"

// layers is what each package of the module may import from the module,
// as docs/ARCHITECTURE.md draws it: every arrow points down, towards the
// packages that know less. A package missing from the table, or an import
// it does not list, fails TestImportsPointDown; change the table and the
// document together.
var layers = map[string][]string{
	// Leaves: they import nothing of the module.
	"internal/jsonenc":        nil,
	"internal/schema":         nil,
	"internal/search":         nil,
	"internal/nskey":          nil,
	"internal/dbtime":         nil,
	"internal/procinfo":       nil,
	"internal/golden":         nil,
	"internal/clip":           nil,
	"internal/gitignore":      nil,
	"permission":              {"tool"},
	"llm/internal/streamtest": nil,
	// The LangGraph API on the wire: its server and its clients share it.
	"langgraph": {"internal/clip"},

	// Messages and models.
	"llm":                         {"internal/jsonenc"},
	"llm/internal/wire":           {"llm"},
	"llm/internal/providertest":   {"llm", "internal/golden"},
	"llm/anthropic":               {"llm", "llm/internal/wire"},
	"llm/openai":                  {"llm", "llm/internal/wire"},
	"llm/anthropic/anthropictest": {"llm/internal/streamtest"},
	"llm/openai/openaitest":       {"llm/internal/streamtest"},
	"llm/providers":               {"llm", "llm/anthropic", "llm/openai"},
	"llm/replay":                  {"llm"},
	"llm/modeltest":               {"llm"},
	"profile":                     {"llm"},

	// A thread's data, tools and long-term items.
	"thread":          {"llm"},
	"tool":            {"llm", "internal/schema"},
	"store":           {"internal/nskey"},
	"store/storetest": {"store"},

	// Storage of threads and files.
	"checkpoint":                {"llm", "thread"},
	"checkpoint/checkpointtest": {"checkpoint", "llm", "thread"},
	"backend":                   {"thread", "store", "backend/internal/diskkey", "internal/inotify", "internal/search"},
	"backend/internal/diskkey":  nil,
	"backend/sandbox":           {"backend", "backend/internal/diskkey", "netproxy", "internal/procinfo"},
	"backend/isolate":           {"backend", "internal/gitignore"},
	"netproxy":                  {"netproxy/bridge"},
	"netproxy/bridge":           {},
	"eval":                      {"backend", "backend/sandbox", "internal/fsutil"},
	"eval/atif":                 {"agent", "llm"},
	"internal/fsutil":           {},
	"backend/backendtest":       {"backend"},
	"sqlcore/internal/cpcodec":  {"checkpoint", "llm", "thread"},
	"internal/crashtest":        {"checkpoint", "llm", "thread"},
	"sqlcore":                   {"checkpoint", "store", "llm", "thread", "sqlcore/internal/cpcodec", "internal/dbtime", "internal/nskey"},
	"sqlite":                    {"checkpoint", "store", "llm", "thread", "internal/dbtime", "internal/nskey", "internal/procinfo", "sqlcore"},
	"postgres":                  {"checkpoint", "store", "llm", "thread", "internal/dbtime", "internal/nskey", "internal/procinfo", "sqlcore"},
	"persist":                   {"checkpoint", "store", "sqlite", "postgres"},

	// The run loop: it knows no backend and no tool by name.
	"agent": {"checkpoint", "llm", "store", "thread", "tool", "internal/jsonenc"},

	// The LangGraph API server: its runs, replicas and launcher.
	"server": {"agent", "checkpoint", "internal/clip", "langgraph", "llm", "middleware/steer", "middleware/subagents/background", "middleware/todos", "middleware/verify", "store", "thread"},
	// The protocols served beside it, on its runs: A2A, and MCP at /mcp
	// (mcp: its tools take and answer what deepagents mcp-serve's
	// run_task does).
	"server/a2aserve": {"agent", "internal/clip", "langgraph", "llm", "middleware/subagents/background", "middleware/todos", "server", "store"},
	"server/mcpserve": {"agent", "checkpoint", "internal/clip", "langgraph", "llm", "mcp", "middleware/subagents/background", "server"},
	// The test fixture of the server and the protocols beside it: a deep
	// agent on a scripted model behind a server, and several replicas.
	"server/internal/servertest": {"", "checkpoint", "llm", "llm/replay", "server", "store"},
	"mcp":                        {"agent", "checkpoint", "llm", "middleware/steer", "middleware/subagents/background", "middleware/todos", "tool", "internal/clip", "internal/procinfo"},

	// Tracing: the middleware on the OpenTelemetry API, and the SDK's
	// setup from the environment, apart so that only what sets it up
	// links the SDK.
	"telemetry":               {"agent", "llm", "internal/jsonenc"},
	"telemetry/otlp":          nil,
	"telemetry/otlp/otlptest": nil,

	// The files of an agent as the CLI lays them out, for any program.
	"workspace": {"agent", "backend", "backend/sandbox", "permission", "store"},
	"hooks":     {"agent", "internal/clip", "llm", "middleware/filesystem", "middleware/hitl", "middleware/subagents", "middleware/todos", "permission"},
	"rewind":    {"agent", "backend", "checkpoint", "internal/gitignore", "internal/inotify", "internal/jsonenc", "llm", "store", "tool"},

	// The built-in middleware, a package each: they know the run loop
	// and what they work on, not each other, but for the subagents'
	// approvals (hitl) and the plan a summary keeps (todos).
	"middleware/todos":         {"agent", "tool"},
	"middleware/loops":         {"agent", "tool"},
	"middleware/budget":        {"agent", "llm"},
	"middleware/verify":        {"agent", "llm", "middleware/hitl", "middleware/todos", "tool"},
	"middleware/localcontext":  {"agent", "backend", "llm"},
	"middleware/patch":         {"agent", "llm"},
	"middleware/caching":       {"agent", "llm", "profile"},
	"middleware/hitl":          {"agent", "llm", "permission", "tool"},
	"middleware/memory":        {"agent", "backend", "llm"},
	"middleware/skills":        {"agent", "backend", "llm"},
	"middleware/summarization": {"agent", "backend", "internal/clip", "llm", "middleware/todos", "thread"},
	"middleware/steer":         {"agent", "llm", "store"},
	"middleware/filesystem":    {"agent", "backend", "internal/clip", "tool"},
	"middleware/subagents":     {"agent", "backend", "backend/isolate", "checkpoint", "llm", "middleware/budget", "middleware/hitl", "permission", "thread", "tool"},
	// Background subagents build their local subagents as the task tool
	// does.
	"middleware/subagents/background": {"agent", "backend", "backend/isolate", "checkpoint", "internal/clip", "langgraph", "llm", "middleware/hitl", "middleware/subagents", "thread", "tool"},

	// The deep agent, and the command line.
	"":                                {"agent", "backend", "backend/isolate", "checkpoint", "hooks", "llm", "rewind", "middleware/caching", "middleware/filesystem", "middleware/budget", "middleware/hitl", "middleware/localcontext", "middleware/loops", "middleware/memory", "middleware/patch", "middleware/skills", "middleware/steer", "middleware/subagents", "middleware/subagents/background", "middleware/summarization", "middleware/todos", "middleware/verify", "permission", "profile", "store", "telemetry", "thread", "tool"},
	"cmd/deepagents/internal/cli":     {"", "agent", "backend", "checkpoint", "middleware/steer", "cmd/deepagents/internal/acp", "cmd/deepagents/internal/display", "cmd/deepagents/internal/session", "cmd/deepagents/internal/tui", "hooks", "llm", "mcp", "eval", "eval/atif", "internal/fsutil", "llm/replay", "middleware/hitl", "middleware/todos", "middleware/verify", "netproxy", "persist", "rewind", "server", "server/a2aserve", "server/mcpserve", "store", "telemetry", "telemetry/otlp", "thread", "workspace"},
	"cmd/deepagents/internal/session": {"", "agent", "backend", "backend/isolate", "backend/sandbox", "checkpoint", "cmd/deepagents/internal/display", "hooks", "llm", "llm/providers", "llm/replay", "mcp", "middleware/budget", "middleware/filesystem", "middleware/hitl", "middleware/loops", "middleware/todos", "middleware/verify", "netproxy", "permission", "persist", "profile", "rewind", "store", "thread", "tool", "workspace"},
	"cmd/deepagents/internal/display": {"", "hooks", "llm", "netproxy"},
	"cmd/deepagents/internal/acp":     {"", "checkpoint", "internal/clip", "llm", "middleware/filesystem", "middleware/todos", "tool"},
	"cmd/deepagents/internal/tui":     {"", "backend", "cmd/deepagents/internal/display", "llm", "middleware/filesystem", "middleware/hitl", "middleware/steer", "middleware/todos", "netproxy", "thread"},
	"cmd/deepagents":                  {"cmd/deepagents/internal/cli", "internal/procinfo", "netproxy/bridge"},

	// Tests' helpers.
	"internal/asuser":  nil,
	"internal/inotify": nil,
}

// TestImportsPointDown checks every package's non-test imports against
// layers. Benchmarks and examples are programs on top of everything and
// are not checked.
func TestImportsPointDown(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || path == "bench" || path == "examples" || path == "eval/dataset" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		if pkg == "." {
			pkg = ""
		}
		allowed, ok := layers[pkg]
		if !ok {
			if !seen[pkg] {
				t.Errorf("package %q is not in the layers table", pkg)
			}
			seen[pkg] = true
			return nil
		}
		seen[pkg] = true
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "go.opentelemetry.io/") && !otelAllowed(pkg, p) {
				t.Errorf("%s imports %q: only package telemetry, the deep agent and the CLI use the OpenTelemetry API, and only telemetry/otlp its SDK", path, p)
			}
			if pkg == "cmd/deepagents/internal/tui" && strings.HasPrefix(p, "github.com/spf13/") {
				t.Errorf("%s imports %q: the interactive session is fed by the agent's events, not by the commands", path, p)
			}
			if p != module && !strings.HasPrefix(p, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
			if !slices.Contains(allowed, rel) {
				t.Errorf("%s imports %q, which package %q may not import", path, rel, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for pkg := range layers {
		if !seen[pkg] {
			t.Errorf("the layers table lists %q, which has no Go files", pkg)
		}
	}
}

// otelAllowed reports whether package pkg may import the OpenTelemetry
// package p: the API in the tracing middleware, in the deep agent's Config
// and in the command line (so that the core, agent above all, stays free
// of it), the SDK
// and the OTLP packages in telemetry/otlp alone, so that a program
// links them only when it sets tracing up from the environment.
func otelAllowed(pkg, p string) bool {
	switch pkg {
	case "telemetry/otlp", "telemetry/otlp/otlptest":
		return true
	case "telemetry", "", "cmd/deepagents/internal/cli", "cmd/deepagents/internal/session":
		return p == "go.opentelemetry.io/otel" || p == "go.opentelemetry.io/otel/trace" ||
			p == "go.opentelemetry.io/otel/attribute" || p == "go.opentelemetry.io/otel/codes" ||
			p == "go.opentelemetry.io/otel/propagation"
	}
	return false
}

// libraryExcludes are modules the library's go.mod must not require: the
// command line's (it is a module of its own, cmd/deepagents) and gRPC,
// which would link html/template's reflection into every program
// (docs/ARCHITECTURE.md, "Modules"). The OpenTelemetry SDK is required,
// by telemetry/otlp alone; a program that does not import that package
// gets no SDK in its go.mod.
var libraryExcludes = []string{
	"github.com/spf13/",
	"github.com/charmbracelet/",
	"github.com/yuin/goldmark",
	"google.golang.org/grpc",
	"go.opentelemetry.io/otel/exporters/",
}

// TestLibraryRequirements reads the library's go.mod: what a `go get`
// of the library can add to a user's go.mod is at most what it requires.
func TestLibraryRequirements(t *testing.T) {
	src, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(src)) {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(fields) < 2 || !strings.Contains(fields[0], ".") {
			continue
		}
		for _, ex := range libraryExcludes {
			if strings.HasPrefix(fields[0], ex) {
				t.Errorf("go.mod requires %s: the library must not (it belongs to the CLI's module, or is kept out on purpose)", fields[0])
			}
		}
	}
}
