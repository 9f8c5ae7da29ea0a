package tool

import "testing"

func TestNameMatches(t *testing.T) {
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"read_file", "read_file", true},
		{"read_file", "read_files", false},
		{"read", "read_file", false},
		{"mcp__github", "mcp__github__create_issue", true},
		{"mcp__github", "mcp__githubx__create_issue", false},
		{"mcp__github", "mcp__github", true},
		{"mcp__github__*", "mcp__github__create_issue", true},
		{"mcp__github__*", "mcp__gitlab__create_issue", false},
		{"mcp__github__get_*", "mcp__github__get_issue", true},
		{"mcp__github__get_*", "mcp__github__list_issues", false},
		{"mcp__github__create_issue", "mcp__github__create_issue_comment", false},
		{"mcp__a__b", "mcp__a__b__c", false},
		{"*", "anything", true},
		{"execute", "mcp__x__execute", false},
	} {
		if got := NameMatches(c.pattern, c.name); got != c.want {
			t.Errorf("NameMatches(%q, %q) = %v, want %v", c.pattern, c.name, got, c.want)
		}
	}
}
