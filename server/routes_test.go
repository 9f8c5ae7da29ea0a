package server_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// route is a method and the name of a langgraph path constant.
type route struct{ method, path string }

func (r route) String() string { return r.method + " langgraph." + r.path }

// oneOf lists the routes of which the Client need call one: the server
// answers each group's routes with one handler (which the test checks),
// so one method covers them all.
var oneOf = []struct {
	routes []route
	why    string
}{
	{[]route{{"GET", "PathThreadHistory"}, {"POST", "PathThreadHistory"}},
		"GET history reads limit and before from the query, POST all of a HistoryRequest; Client.History sends POST"},
}

// TestClientCoversRoutes fails when the server serves a LangGraph route
// no langgraph.Client method calls, or a Client method calls a route the
// server does not serve: it reads the routes the server's files register
// (m.HandleFunc("METHOD "+langgraph.PathX, handler)) and the calls of
// langgraph's files that carry an http.MethodX and an expression naming
// a PathX constant (c.Do(ctx, http.MethodGet, c.path(PathRun, ...), ...),
// or a helper such as c.stream or c.thread). The protocols' routes
// (server/a2aserve, server/mcpserve) are not the LangGraph API's.
func TestClientCoversRoutes(t *testing.T) {
	served := servedRoutes(t, ".")
	called := calledRoutes(t, filepath.Join("..", "langgraph"))
	if len(served) < 30 || served[route{"GET", "PathOK"}] == "" || served[route{"GET", "PathRunStream"}] == "" {
		t.Fatalf("read %d routes from the server's files, not all of them: %v", len(served), served)
	}
	covered := map[route]bool{}
	for _, g := range oneOf {
		n := 0
		for _, r := range g.routes {
			if served[r] != served[g.routes[0]] || served[r] == "" {
				t.Errorf("oneOf groups %v, but the server answers them with %q and %q (%s)", g.routes, served[g.routes[0]], served[r], g.why)
			}
			if called[r] {
				n++
			}
		}
		switch n {
		case 0: // reported below, route by route
		case len(g.routes):
			t.Errorf("oneOf groups %v, all of which Client methods call: drop the group", g.routes)
		default:
			for _, r := range g.routes {
				covered[r] = true
			}
		}
	}
	for r, handler := range served {
		if !called[r] && !covered[r] {
			t.Errorf("the server serves %v (%s), which no langgraph.Client method calls", r, handler)
		}
	}
	for r := range called {
		if served[r] == "" {
			t.Errorf("a langgraph.Client method calls %v, which the server does not serve", r)
		}
	}
}

// goFiles parses the non-test Go files of dir.
func goFiles(t *testing.T, dir string) (*token.FileSet, []*ast.File, []string) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	var srcs []string
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		src, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, n, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		files, srcs = append(files, f), append(srcs, string(src))
	}
	return fset, files, srcs
}

// servedRoutes reads the routes the files of dir register, each with its
// handler's source.
func servedRoutes(t *testing.T, dir string) map[route]string {
	t.Helper()
	fset, files, srcs := goFiles(t, dir)
	out := map[route]string{}
	registrations := 0
	for i, f := range files {
		registrations += strings.Count(srcs[i], ".HandleFunc(") + strings.Count(srcs[i], ".Handle(")
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "HandleFunc" && sel.Sel.Name != "Handle" {
				return true
			}
			r, ok := registration(call)
			if !ok {
				t.Errorf("%s: a route registered in a form this test does not read", fset.Position(call.Pos()))
				return true
			}
			if _, dup := out[r]; dup {
				t.Errorf("%s: %v registered twice", fset.Position(call.Pos()), r)
			}
			out[r] = srcs[i][fset.Position(call.Args[1].Pos()).Offset:fset.Position(call.Args[1].End()).Offset]
			return true
		})
	}
	if registrations != len(out) {
		t.Errorf("the server's files register %d routes; the test read %d", registrations, len(out))
	}
	return out
}

// registration reads m.HandleFunc("METHOD "+langgraph.PathX, handler).
func registration(call *ast.CallExpr) (route, bool) {
	if len(call.Args) != 2 {
		return route{}, false
	}
	bin, ok := call.Args[0].(*ast.BinaryExpr)
	if !ok || bin.Op != token.ADD {
		return route{}, false
	}
	lit, ok := bin.X.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return route{}, false
	}
	method, err := strconv.Unquote(lit.Value)
	if err != nil || !strings.HasSuffix(method, " ") {
		return route{}, false
	}
	sel, ok := bin.Y.(*ast.SelectorExpr)
	if !ok {
		return route{}, false
	}
	if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "langgraph" || !strings.HasPrefix(sel.Sel.Name, "Path") {
		return route{}, false
	}
	return route{strings.TrimSuffix(method, " "), sel.Sel.Name}, true
}

// calledRoutes reads the routes the files of dir call: each call with an
// argument http.MethodX and one naming a Path constant of dir's package.
func calledRoutes(t *testing.T, dir string) map[route]bool {
	t.Helper()
	_, files, _ := goFiles(t, dir)
	paths := map[string]bool{}
	for _, f := range files {
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Path") {
							paths[n.Name] = true
						}
					}
				}
			}
		}
	}
	out := map[route]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			method := ""
			var named []string
			for _, a := range call.Args {
				if sel, ok := a.(*ast.SelectorExpr); ok && strings.HasPrefix(sel.Sel.Name, "Method") {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "http" {
						method = strings.ToUpper(strings.TrimPrefix(sel.Sel.Name, "Method"))
						continue
					}
				}
				ast.Inspect(a, func(n ast.Node) bool {
					if id, ok := n.(*ast.Ident); ok && paths[id.Name] && !slices.Contains(named, id.Name) {
						named = append(named, id.Name)
					}
					return true
				})
			}
			if method != "" && len(named) == 1 {
				out[route{method, named[0]}] = true
			} else if method != "" && len(named) > 1 {
				t.Errorf("a call with http.Method%s names several paths: %v", method, named)
			}
			return true
		})
	}
	return out
}
