package backend

// ProtectedPaths are the workspace paths whose contents other programs run
// later, outside any sandbox: git's hooks and configuration (core.fsmonitor,
// core.hooksPath), hook managers' folders and files (husky, pre-commit,
// lefthook: the installed hook runs what they name), direnv's .envrc,
// editors' task, launch and settings files, and what the agent's own CLI
// runs from a trusted workspace (--trust-workspace: Claude Code's .claude
// folder, whose settings name hooks and hold their scripts, .mcp.json's
// servers, the hooks of .deepagents/config.yaml). A model that may write
// them could run code as the user the next time the user commits, enters
// the folder, opens the editor or starts an agent there. They are relative to the workspace root and
// slash-separated; a folder covers everything below it.
//
// The CLI keeps them read-only inside the execute sandbox
// (Bubblewrap.Protected: a missing one cannot be created while a command
// runs) and asks before a file tool writes them.
var ProtectedPaths = []string{
	".git/hooks",
	".git/config",
	".git/modules",
	".husky",
	".pre-commit-config.yaml",
	"lefthook.yml",
	".lefthook.yml",
	".envrc",
	".vscode",
	".idea",
	".devcontainer",
	".claude",
	".mcp.json",
	".deepagents/config.yaml",
	".deepagents/hooks.json",
}
