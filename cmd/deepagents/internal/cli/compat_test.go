package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// What a Claude Code or Codex user's repository and home hold works here
// unchanged (docs/compatibility.md).

// skill writes a SKILL.md in dir/name.
func skill(t *testing.T, dir, name, description string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	body := "---\nname: " + name + "\ndescription: " + description + "\n---\nThe steps.\n"
	if err := os.WriteFile(filepath.Join(dir, name, "SKILL.md"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The skills of the four folders other agents keep (~/.claude/skills,
// ~/.agents/skills, .claude/skills, .agents/skills) are the agent's, beside
// its own; a skill of .deepagents/skills wins a name it shares with one of
// .claude/skills.
func TestOtherAgentsSkillsThroughCLI(t *testing.T) {
	w := newWorld(t)
	skill(t, filepath.Join(w.home, ".claude", "skills"), "home-claude", "From the home's Claude folder.")
	skill(t, filepath.Join(w.home, ".agents", "skills"), "home-agents", "From the home's agents folder.")
	skill(t, filepath.Join(w.dir, ".claude", "skills"), "repo-claude", "From the repository's Claude folder.")
	skill(t, filepath.Join(w.dir, ".agents", "skills"), "repo-agents", "From the repository's agents folder.")
	skill(t, filepath.Join(w.dir, ".claude", "skills"), "shared", "The Claude one.")
	skill(t, filepath.Join(w.dir, ".deepagents", "skills"), "shared", "Our own.")
	s := w.script(`{"turns":[{"content":"done","expect":{
		"system_contains":["home-claude","From the home's Claude folder.","/user/.claude/skills/home-claude/SKILL.md",
			"home-agents","/user/.agents/skills/home-agents/SKILL.md",
			"repo-claude","/.claude/skills/repo-claude/SKILL.md","repo-agents","/.agents/skills/repo-agents/SKILL.md","Our own."],
		"system_exclude":["The Claude one."]}}]}`)
	if code, stdout, stderr := w.run(w.runArgs(s, "go")...); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
	}
}
