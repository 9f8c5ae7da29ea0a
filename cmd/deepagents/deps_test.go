package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// notLinked are packages the command must not link: text/template's
// reflection (reflect.Value.MethodByName, which html/template's execution
// goes through) turns the linker's dead-method elimination off for the
// whole program, and html/template in eval's HTML page put 17 MiB on the
// stripped binary (docs/ARCHITECTURE.md, "Modules"). The go command's own
// templates (go list -f) are not linked into anything.
var notLinked = []string{"text/template", "html/template"}

// templateImporters may import text/template all the same, for what the
// linker drops: cobra runs a template only for one set with
// SetUsageTemplate, SetHelpTemplate or SetVersionTemplate (its own help
// is Go functions), and the command sets none (templateSetters).
var templateImporters = []string{"github.com/spf13/cobra"}

// templateSetters are the calls that would make cobra's template
// execution, and with it text/template's reflection, reachable.
var templateSetters = []string{".SetUsageTemplate(", ".SetHelpTemplate(", ".SetVersionTemplate("}

// TestNoTemplateDependency lists the command's dependencies, as go build
// would link them for this platform, and fails on any of notLinked,
// naming a chain of imports from the command to it.
func TestNoTemplateDependency(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".").Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list -deps: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	imports := map[string][]string{}
	var root string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		imports[fields[0]] = fields[1:]
		root = fields[0] // go list -deps lists the command last
	}
	if len(imports) < 10 {
		t.Fatalf("go list -deps listed %d packages: %s", len(imports), out)
	}
	for _, bad := range notLinked {
		if _, ok := imports[bad]; !ok {
			continue
		}
		// The importers to blame: for text/template, those not allowed it.
		var importers []string
		for p, imps := range imports {
			if slices.Contains(imps, bad) && (bad != "text/template" || !slices.Contains(templateImporters, p)) {
				importers = append(importers, p)
			}
		}
		if len(importers) == 0 {
			continue
		}
		slices.Sort(importers)
		chain := append(importChain(imports, root, importers[0]), bad)
		t.Errorf("the command links %s, imported by %s (%s); write it without templates",
			bad, strings.Join(importers, ", "), strings.Join(chain, " → "))
	}
}

// TestNoCobraTemplate fails on a call in the command's module that sets
// cobra a template: it would link text/template's execution (see
// templateImporters).
func TestNoCobraTemplate(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, call := range templateSetters {
			if strings.Contains(string(src), call) {
				t.Errorf("%s calls cobra's %s: it links text/template's reflection; write the help as a function (SetUsageFunc, SetHelpFunc)", path, strings.Trim(call, ".("))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// importChain is a shortest chain of imports from from to to.
func importChain(imports map[string][]string, from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == to {
			var chain []string
			for ; p != ""; p = prev[p] {
				chain = append(chain, p)
			}
			slices.Reverse(chain)
			return chain
		}
		for _, q := range imports[p] {
			if _, seen := prev[q]; !seen {
				prev[q] = p
				queue = append(queue, q)
			}
		}
	}
	return []string{from, "…", to}
}
