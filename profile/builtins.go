package profile

// The built-in profiles. Their prompts are short on purpose: every token of
// them is sent with every request of every run. Each says what its
// vendor's published prompting guidance asks of an agent harness, in this
// project's words; docs/profiles.md gives the sources.
var builtins = map[string]Profile{
	Default: {
		Name:  Default,
		Cache: Cache{Breakpoints: true},
	},
	Claude: {
		Name:   Claude,
		Prompt: claudePrompt,
		Cache:  Cache{Breakpoints: true},
	},
	GPT: {
		Name:   GPT,
		Prompt: gptPrompt,
		Cache:  Cache{Key: true},
	},
	Codex: {
		Name:   Codex,
		Prompt: codexPrompt,
		Cache:  Cache{Key: true},
	},
	Open: {
		Name:   Open,
		Prompt: openPrompt,
		ToolDescriptions: map[string]string{
			"read_file": openReadDescription,
			"glob":      openGlobDescription,
		},
	},
}

const claudePrompt = `## Tool use
- When tool calls do not depend on each other (reading three files, say), make them all in the same turn; make them one after another only when a call needs an earlier one's result.`

const gptPrompt = `## Tool use
- Keep going until the task is completely resolved before ending your turn; do not stop to ask about steps you can take yourself.
- When tool calls do not depend on each other, make them in the same turn.`

const codexPrompt = `## Autonomy
- Once the direction is clear, gather context, implement and verify on your own; do not wait to be prompted at each step, and do not announce a plan before acting.
- Act on reasonable assumptions; end your turn with a question only when you are truly blocked.
- Decide up front which files you need and read or search them in one turn, in parallel.
- Before you finish, bring every write_todos item up to date: completed, or why not.`

const openPrompt = `## Tool use
- Call a tool by its exact name, with a JSON object holding only the arguments its schema lists.
- File paths are absolute and start with /.
- Read each tool result before the next step; when a call fails, change it according to the error instead of repeating it.`

const openReadDescription = `Read a file. The result starts with a header (after any notice) such as "@@ lines 1-200 | next offset 200 @@": the 1-based lines shown, and the offset to continue from when more follow. The lines after the header are the file's exact content; never copy the header into an edit.

Read at most 200 lines at a time (limit: 200), paging on with offset, so that a long file does not fill your context. Read a file before editing it.`

const openGlobDescription = `Find files by a glob pattern and return their absolute paths. A pattern without "/" matches names at any depth ("*.py"); one with "/" matches paths below path ("src/**/*.py"). Names starting with "." match only patterns starting with ".".`
