package backend_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/backend/backendtest"
	"github.com/deepagents-go/deepagents/thread"
)

func TestPolicyConformance(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) backend.Backend {
		// Rules that never touch the suite's paths: everything it does
		// is allowed.
		p, err := backend.NewPolicy(backend.NewStateBackend(thread.NewFiles(nil)),
			backend.Deny(backend.AccessAll, "/forbidden/"),
			backend.Deny(backend.AccessWrite, "**/*.lock"),
			backend.Allow(backend.AccessAll, "/"),
		)
		if err != nil {
			t.Fatal(err)
		}
		return p
	})
}

func TestPolicyRules(t *testing.T) {
	ctx := context.Background()
	inner := backend.NewStateBackend(thread.NewFiles(nil))
	for p, c := range map[string]string{
		"/secrets/key.pem":   "secret",
		"/secrets2/ok.txt":   "secret-ish but allowed",
		"/app/main.go":       "secret in code",
		"/app/.env":          "secret env",
		"/app/conf/prod.env": "x",
		"/docs/readme.md":    "readme secret",
		"/workspace/a.txt":   "a",
	} {
		if err := inner.Write(ctx, p, c); err != nil {
			t.Fatal(err)
		}
	}
	pol, err := backend.NewPolicy(inner,
		backend.Deny(backend.AccessAll, "/secrets"),
		backend.Deny(backend.AccessRead, "**/.env"),
		backend.Allow(backend.AccessWrite, "/workspace/"),
		backend.Deny(backend.AccessWrite, "/"),
	)
	if err != nil {
		t.Fatal(err)
	}
	denied := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, backend.ErrPermission) {
			t.Errorf("%s: error %v, want ErrPermission", what, err)
		}
	}
	_, err = pol.Read(ctx, "/secrets/key.pem", 0, 0)
	denied("read /secrets/key.pem", err)
	_, err = pol.Read(ctx, "secrets//key.pem", 0, 0)
	denied("read by another spelling", err)
	_, err = pol.Read(ctx, "/app/.env", 0, 0)
	denied("read /app/.env", err)
	if _, err := pol.Read(ctx, "/secrets2/ok.txt", 0, 0); err != nil {
		t.Errorf("prefix rules are by element: /secrets2 denied: %v", err)
	}
	if _, err := pol.Read(ctx, "/app/main.go", 0, 0); err != nil {
		t.Errorf("read /app/main.go: %v", err)
	}
	denied("write outside /workspace", pol.Write(ctx, "/app/new.go", "x"))
	if err := pol.Write(ctx, "/workspace/b.txt", "b"); err != nil {
		t.Errorf("write in /workspace: %v", err)
	}
	_, err = pol.Edit(ctx, "/app/main.go", "code", "x", false)
	denied("edit outside /workspace", err)
	_, err = pol.List(ctx, "/secrets")
	denied("list /secrets", err)
	_, err = pol.Grep(ctx, backend.GrepQuery{Pattern: "x", Path: "/secrets"})
	denied("grep /secrets", err)

	ls, _ := pol.List(ctx, "/")
	if got := pathsOf(ls); !slices.Equal(got, []string{"/app", "/docs", "/secrets2", "/workspace"}) {
		t.Errorf("List(/) = %q", got)
	}
	ls, _ = pol.List(ctx, "/app")
	if got := pathsOf(ls); !slices.Equal(got, []string{"/app/conf", "/app/main.go"}) {
		t.Errorf("List(/app) = %q", got)
	}
	ms, _ := pol.Grep(ctx, backend.GrepQuery{Pattern: "secret", Mode: backend.GrepFiles})
	var got []string
	for _, m := range ms {
		got = append(got, m.Path)
	}
	if !slices.Equal(got, []string{"/app/main.go", "/docs/readme.md", "/secrets2/ok.txt"}) {
		t.Errorf("grep leaked or lost: %q", got)
	}
	fs, _ := pol.Glob(ctx, "**", "/")
	for _, f := range fs {
		if f.Path == "/secrets/key.pem" || f.Path == "/app/.env" {
			t.Errorf("glob leaked %s", f.Path)
		}
	}
	up := pol.Upload(ctx, []backend.File{{Path: "/workspace/u.txt", Content: []byte("u")}, {Path: "/app/u.txt", Content: []byte("u")}})
	if up[0].Err != nil || backend.ErrorCode(up[1].Err) != "permission_denied" {
		t.Errorf("upload results %v", up)
	}
	dl := pol.Download(ctx, []string{"/app/.env", "/docs/readme.md"})
	if backend.ErrorCode(dl[0].Err) != "permission_denied" || string(dl[1].Content) != "readme secret" {
		t.Errorf("download results %v", dl)
	}
	if _, ok := any(pol).(backend.Sandbox); ok {
		t.Error("a Policy is a Sandbox")
	}
}

func TestNewPolicyErrors(t *testing.T) {
	s := backend.NewStateBackend(nil)
	for name, r := range map[string]backend.Rule{
		"bad glob":   backend.Deny(backend.AccessRead, "/a/[x"),
		"traversal":  backend.Deny(backend.AccessRead, "/a/../b"),
		"no access":  {Path: "/a"},
		"bad access": {Path: "/a", Access: 8},
	} {
		if _, err := backend.NewPolicy(s, r); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := backend.NewPolicy(nil); err == nil {
		t.Error("nil inner: no error")
	}
}
