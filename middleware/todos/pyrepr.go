package todos

import (
	"fmt"
	"strings"
	"unicode"
)

// todosRepr writes the todo list as the Python reference's write_todos
// result shows it: a Python list of dicts, as repr() prints it.
func todosRepr(todos []Todo) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, t := range todos {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("{'content': ")
		pyRepr(&b, t.Content)
		b.WriteString(", 'status': ")
		pyRepr(&b, string(t.Status))
		if t.ActiveForm != "" {
			b.WriteString(", 'activeForm': ")
			pyRepr(&b, t.ActiveForm)
		}
		b.WriteByte('}')
	}
	b.WriteByte(']')
	return b.String()
}

// pyRepr writes s as Python's repr() of a str: single quotes unless s holds
// a single quote and no double one, and escapes for the backslash, the
// quote, \t \n \r and characters that are not printable.
func pyRepr(b *strings.Builder, s string) {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	b.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == '\\' || r == quote:
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteRune(quote)
}
