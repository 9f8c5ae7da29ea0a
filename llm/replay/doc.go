// Package replay provides a scripted model: it plays model turns written as
// Go values or a JSON file, checks that each request looks as expected, and
// fails the run clearly when it is called more often than scripted; and
// Recording, which writes a real model's exchanges to such a file. It is
// part of the product, not a test double: the CLI reaches it as
// --model replay:FILE and --record FILE. The harness's own tests use it,
// and so can users testing their agents.
//
// The file format (documented in docs/SCRIPTED_MODEL.md):
//
//	{"context_window": 200000,
//	 "turns": [
//	   {"content": "text",
//	    "tool_calls": [{"id": "c1", "name": "write_todos", "args": {"todos": []}}],
//	    "usage": {"input_tokens": 10, "output_tokens": 5},
//	    "agent": "general-purpose",
//	    "expect": {"system_contains": ["..."], "system_exclude": ["..."],
//	               "messages_contain": ["..."], "messages_exclude": ["..."],
//	               "last_message_contains": ["..."], "tools_include": ["..."]}}]}
//
// Each turn answers one model call of the agent it names ("main", the
// default, for the top-level agent; a subagent's name; "summarizer" for
// summaries). Each agent's turns are consumed in order.
package replay
