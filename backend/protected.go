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
// (sandbox.Bubblewrap.Protected: a missing one cannot be created while a
// command runs) and asks before a file tool writes them.
var ProtectedPaths = []string{
	// git's files that choose code or configuration (gitrepository-layout,
	// and what setup.c reads): hooks, config, config.worktree, commondir
	// (git takes config, hooks, refs and objects from the folder it
	// names), info (attributes, which choose a filter or diff driver),
	// modules' and worktrees' own git folders (each with its commondir,
	// gitdir and config.worktree), objects/info/alternates (objects from
	// elsewhere). What git writes in normal use (objects, refs, index,
	// HEAD, logs, packed-refs) stays writable: git commit works in the
	// sandbox. A .git that is a file ("gitdir: DIR") is read-only too.
	".git/hooks",
	".git/config",
	".git/config.worktree",
	".git/commondir",
	".git/info",
	".git/modules",
	".git/worktrees",
	".git/objects/info/alternates",
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
