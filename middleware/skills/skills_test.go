package skills_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/middleware/skills"
	"github.com/deepagents-go/deepagents/thread"
)

func stateWith(files map[string]string) (*thread.Files, backend.Backend) {
	f := thread.NewFiles(nil)
	for p, c := range files {
		f.Put(p, thread.FileData{Content: c})
	}
	return f, backend.NewStateBackend(f)
}

const goodSkill = "---\nname: web-research\ndescription: Structured web research with sources.\nlicense: MIT\nallowed-tools: grep read_file\nmetadata:\n  version: 2\n---\n\n# Web research\n\nSECRET BODY: step one, step two.\n"

func TestSkills(t *testing.T) {
	files := map[string]string{
		"/user/skills/web-research/SKILL.md":                    goodSkill,
		"/user/skills/code-review/SKILL.md":                     "---\nname: code-review\ndescription: Old review skill.\n---\nbody",
		"/proj/skills/code-review/SKILL.md":                     "---\nname: code-review\ndescription: Review Go code for bugs.\n---\nbody",
		"/proj/skills/wrong-dir/SKILL.md":                       "---\nname: other-name\ndescription: x\n---\n",
		"/proj/skills/no-front/SKILL.md":                        "# just markdown\n",
		"/proj/skills/bad-yaml/SKILL.md":                        "---\nname: [unclosed\n---\n",
		"/proj/skills/no-desc/SKILL.md":                         "---\nname: no-desc\n---\n",
		"/proj/skills/Upper/SKILL.md":                           "---\nname: Upper\ndescription: x\n---\n",
		"/proj/skills/long-desc/SKILL.md":                       "---\nname: long-desc\ndescription: " + strings.Repeat("d", 1025) + "\n---\n",
		"/proj/skills/unclosed/SKILL.md":                        "---\nname: unclosed\ndescription: x\n",
		"/proj/skills/not-a-skill/README.md":                    "no SKILL.md here",
		"/proj/skills/loose-file.md":                            "not a directory",
		"/proj/skills/" + strings.Repeat("n", 65) + "/SKILL.md": "---\nname: " + strings.Repeat("n", 65) + "\ndescription: x\n---\n",
	}
	_, b := stateWith(files)
	var logs bytes.Buffer
	sk, err := skills.New(skills.Config{Backend: b, Sources: []string{"/user/skills/", "/proj/skills", "/absent/skills"},
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	m := replay.New(replay.Turn{Content: "ok", Expect: &replay.Expect{
		SystemContains: []string{
			"- **code-review**: Review Go code for bugs.\n  Instructions: /proj/skills/code-review/SKILL.md",
			"- **web-research**: Structured web research with sources.\n  Instructions: /user/skills/web-research/SKILL.md",
		},
		SystemExclude: []string{"SECRET BODY", "Old review skill", "other-name", "no-desc", "Upper", "long-desc", "unclosed"},
	}})
	a, err := agent.New(agent.Config{Model: m, Middleware: []agent.Middleware{sk}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Invoke(context.Background(), agent.Prompt("hi")); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"wrong-dir", "no-front", "bad-yaml", "no-desc", "Upper", "long-desc", "unclosed", "longer than 64"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no warning about %s in:\n%s", want, logs.String())
		}
	}
	loaded := sk.Load(context.Background())
	if len(loaded) != 2 || loaded[1].License != "MIT" || strings.Join(loaded[1].AllowedTools, ",") != "grep,read_file" || loaded[1].Metadata["version"] != "2" {
		t.Errorf("loaded = %+v", loaded)
	}
}

func FuzzParseSkill(f *testing.F) {
	f.Add([]byte(goodSkill))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("---\nname: a\ndescription: b\n---"))
	f.Fuzz(func(t *testing.T, content []byte) {
		sk, err := skills.Parse("/skills/web-research/SKILL.md", content)
		if err == nil && (sk.Name != "web-research" || sk.Description == "") {
			t.Fatalf("accepted an invalid skill: %+v", sk)
		}
	})
}
