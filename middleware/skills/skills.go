// Package skills is the skills middleware: it finds skills (directories
// holding a SKILL.md) through the agent's backend and lists them in the
// system prompt, for the agent to read when a task calls for one.
package skills

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/backend"
	"github.com/deepagents-go/deepagents/llm"
)

// Skill limits from the SKILL.md format.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	// File is the file of a skill's directory that describes it.
	File = "SKILL.md"
)

// Value is the state value in which a run keeps the skills it found: a
// JSON list of Skill, for inspection.
const Value = "skills_metadata"

// Skill is a skill's metadata: what the system prompt shows of it. The
// instructions stay in its SKILL.md until the agent reads them.
type Skill struct {
	Name          string            `json:"name"`
	Description   string            `json:"description"`
	Path          string            `json:"path"` // of its SKILL.md
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
	AllowedTools  []string          `json:"allowed_tools,omitempty"`
}

// Config configures the skills middleware.
type Config struct {
	// Backend is where the skills are found. Required.
	Backend backend.Backend
	// Sources are the directories holding skills, lowest priority first.
	Sources []string
	// Logger receives warnings about skipped skills; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Middleware finds skills (directories holding a SKILL.md with YAML front
// matter) in source directories at the start of every run and lists each
// one's name, description and path in the system prompt. The agent reads a
// skill's full instructions only when it needs them (progressive
// disclosure). A later source overrides an earlier skill of the same name;
// invalid skills are skipped with a warning.
type Middleware struct {
	backend backend.Backend
	sources []string
	logger  *slog.Logger
	// prompt appends the section to the system prompt: the same
	// section to the same prompt, step after step.
	prompt llm.SystemMemo
}

// New returns the skills middleware. It fails without a Backend.
func New(cfg Config) (*Middleware, error) {
	if cfg.Backend == nil {
		return nil, errors.New("skills: Config.Backend is required")
	}
	return &Middleware{backend: cfg.Backend, sources: cfg.Sources, logger: cfg.Logger}, nil
}

// Name implements agent.Middleware.
func (*Middleware) Name() string { return "skills" }

// PrivateValues implements agent.PrivateValuer: each agent lists its own
// skills.
func (*Middleware) PrivateValues() []string { return []string{Value} }

type skillsKey struct{}

// BeforeAgent implements agent.BeforeAgentHook.
func (s *Middleware) BeforeAgent(ctx context.Context, rt *agent.Runtime) error {
	skills := s.Load(ctx)
	rt.SetLocal(skillsKey{}, skillsSection(skills))
	raw, err := json.Marshal(skills)
	if err != nil {
		return err
	}
	if old, ok := rt.Value(Value); !ok || string(old) != string(raw) {
		rt.SetValue(Value, raw)
	}
	return nil
}

// WrapModel implements agent.ModelWrapper.
func (s *Middleware) WrapModel(ctx context.Context, req *agent.ModelRequest, next agent.ModelHandler) (*llm.Response, error) {
	if sec, ok := req.Runtime.Local(skillsKey{}); ok && sec.(string) != "" {
		s.prompt.Append(&req.Request, sec.(string))
	}
	return next(ctx, req)
}

// Load finds the skills of every source, sorted by name.
func (s *Middleware) Load(ctx context.Context) []Skill {
	log := cmp.Or(s.logger, slog.Default())
	byName := make(map[string]Skill)
	for _, src := range s.sources {
		dir, err := backend.Clean(src)
		if err != nil {
			log.Warn("skills: bad source directory", "source", src, "err", err)
			continue
		}
		entries, err := s.backend.List(ctx, dir)
		if err != nil {
			if !errors.Is(err, backend.ErrNotFound) {
				log.Warn("skills: cannot list source", "source", dir, "err", err)
			}
			continue
		}
		var paths []string
		for _, e := range entries {
			if e.IsDir {
				paths = append(paths, path.Join(e.Path, File))
			}
		}
		for _, r := range s.backend.Download(ctx, paths) {
			if r.Err != nil {
				if backend.ErrorCode(r.Err) != "file_not_found" {
					log.Warn("skills: cannot read skill", "path", r.Path, "err", r.Err)
				}
				continue
			}
			sk, err := Parse(r.Path, r.Content)
			if err != nil {
				log.Warn("skills: skipping invalid skill", "path", r.Path, "err", err)
				continue
			}
			byName[sk.Name] = sk
		}
	}
	out := make([]Skill, 0, len(byName))
	for _, sk := range byName {
		out = append(out, sk)
	}
	slices.SortFunc(out, func(a, b Skill) int { return strings.Compare(a.Name, b.Name) })
	return out
}

var skillNameRe = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// Parse reads the front matter of the SKILL.md at skillPath and checks
// it: name (at most 64 lowercase letters, digits and single hyphens, equal
// to the skill's directory name) and description (at most 1024 characters)
// are required.
func Parse(skillPath string, content []byte) (Skill, error) {
	fm, err := frontMatter(content)
	if err != nil {
		return Skill{}, err
	}
	var raw struct {
		Name          string         `yaml:"name"`
		Description   string         `yaml:"description"`
		License       string         `yaml:"license"`
		Compatibility string         `yaml:"compatibility"`
		Metadata      map[string]any `yaml:"metadata"`
		AllowedTools  any            `yaml:"allowed-tools"`
	}
	if err := yaml.Unmarshal(fm, &raw); err != nil {
		return Skill{}, fmt.Errorf("front matter is not valid YAML: %w", err)
	}
	sk := Skill{Name: strings.TrimSpace(raw.Name), Description: strings.TrimSpace(raw.Description), Path: skillPath,
		License: raw.License, Compatibility: raw.Compatibility}
	dir := path.Base(path.Dir(skillPath))
	switch {
	case sk.Name == "":
		return Skill{}, errors.New("front matter has no name")
	case utf8.RuneCountInString(sk.Name) > MaxNameLen:
		return Skill{}, fmt.Errorf("name %q is longer than %d characters", sk.Name, MaxNameLen)
	case !skillNameRe.MatchString(sk.Name):
		return Skill{}, fmt.Errorf("name %q must be lowercase letters, digits and single hyphens", sk.Name)
	case sk.Name != dir:
		return Skill{}, fmt.Errorf("name %q does not match its directory %q", sk.Name, dir)
	case sk.Description == "":
		return Skill{}, errors.New("front matter has no description")
	case utf8.RuneCountInString(sk.Description) > MaxDescriptionLen:
		return Skill{}, fmt.Errorf("description is longer than %d characters", MaxDescriptionLen)
	}
	if len(raw.Metadata) > 0 {
		sk.Metadata = make(map[string]string, len(raw.Metadata))
		for k, v := range raw.Metadata {
			sk.Metadata[k] = fmt.Sprint(v)
		}
	}
	switch t := raw.AllowedTools.(type) {
	case string:
		sk.AllowedTools = strings.Fields(t)
	case []any:
		for _, v := range t {
			sk.AllowedTools = append(sk.AllowedTools, fmt.Sprint(v))
		}
	}
	return sk, nil
}

// frontMatter returns the YAML between a leading "---" line and the next.
func frontMatter(content []byte) ([]byte, error) {
	content = bytes.TrimPrefix(content, []byte("\ufeff"))
	rest, ok := cutLine(content, "---")
	if !ok {
		return nil, errors.New("no front matter: the file must start with a --- line")
	}
	for i := 0; i <= len(rest); {
		end := bytes.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if end >= 0 {
			line = rest[i : i+end]
		}
		if string(bytes.TrimRight(line, " \t\r")) == "---" {
			return rest[:i], nil
		}
		if end < 0 {
			break
		}
		i += end + 1
	}
	return nil, errors.New("front matter is not closed by a --- line")
}

// cutLine removes a first line equal to want (ignoring trailing blanks).
func cutLine(b []byte, want string) ([]byte, bool) {
	line, rest, found := bytes.Cut(b, []byte("\n"))
	if string(bytes.TrimRight(line, " \t\r")) != want {
		return nil, false
	}
	if !found {
		rest = nil
	}
	return rest, true
}

// skillsSection renders the skills list for the system prompt.
func skillsSection(skills []Skill) string {
	if len(skills) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("## Skills\n\nSkills are packaged instructions for particular kinds of work. Only their summaries are listed here:\n\n")
	for _, sk := range skills {
		fmt.Fprintf(&b, "- **%s**: %s\n  Instructions: %s\n", sk.Name, sk.Description, sk.Path)
	}
	b.WriteString("\nWhen a task matches a skill, read its instructions with read_file before you start, then follow them. A skill's directory may hold more files (scripts, templates, references) that its instructions point to; read those only when needed.")
	return b.String()
}
