package backend

// ProtectedPaths are the workspace paths whose contents other programs run
// later, outside any sandbox: git's hooks and configuration (core.fsmonitor,
// core.hooksPath), hook managers' folders and files (husky, pre-commit,
// lefthook: the installed hook runs what they name), direnv's .envrc, and
// editors' task, launch and settings files. A model that may write them could run
// code as the user the next time the user commits, enters the folder or
// opens the editor. They are relative to the workspace root and
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
}
