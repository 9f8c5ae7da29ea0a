// Package permission decides, by rules, whether a tool call may run, must
// be approved by a human first, or is refused: allow, ask and deny rules in
// the spirit of Claude Code's, for execute by command prefix and for the
// file tools by path glob.
//
// A rule names a tool and, optionally, a pattern in parentheses:
//
//	execute                  every command
//	execute(git status)      "git status" with any further arguments
//	write_file(/src/**)      writes below /src
//	read_file(**/.env)       reads of any .env file
//	task                     every call of the task tool
//
// A command is split into its simple commands at ;, &, &&, ||, | and line
// breaks (quotes respected), leading VAR=value assignments are set aside,
// and each simple command is matched on its own. Deny wins over ask, and
// ask over allow: a command is denied when any of its parts matches a deny
// rule, asked about when any matches an ask rule, and allowed only when
// every part matches an allow rule. What cannot be parsed with certainty
// ($(...), backticks, subshells, here-documents, unbalanced quotes, and
// commands that run other commands, such as sh -c, eval, xargs or sudo)
// is never allowed by a rule: it is asked about (see Rules.Decide).
package permission
