package permission

import (
	"errors"
	"strings"
)

// ErrUnparsable reports a command that Split cannot take apart with
// certainty; rules never allow such a command.
var ErrUnparsable = errors.New("permission: the command cannot be parsed with certainty")

// wrappers run the command they are given, so the command they run is not
// the one a prefix rule sees: a command using one is unparsable.
var wrappers = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "fish": true,
	"eval": true, "exec": true, "source": true, ".": true, "env": true, "xargs": true,
	"sudo": true, "doas": true, "su": true, "nohup": true, "setsid": true, "timeout": true,
	"nice": true, "ionice": true, "time": true, "command": true, "builtin": true,
	"watch": true, "parallel": true, "find": true, "busybox": true, "unshare": true,
	"chroot": true, "strace": true, "ltrace": true, "script": true, "stdbuf": true,
}

// Split returns the simple commands of a shell command line, each as its
// words with quotes removed and leading VAR=value assignments dropped. It
// fails with ErrUnparsable (wrapped, with the reason) on what it cannot
// take apart with certainty.
func Split(command string) ([][]string, error) {
	var (
		out   [][]string
		words []string
		word  strings.Builder
		inW   bool // a word is being built (possibly empty, as in "")
	)
	fail := func(why string) ([][]string, error) {
		return nil, errors.Join(ErrUnparsable, errors.New(why))
	}
	endWord := func() {
		if inW {
			words = append(words, word.String())
			word.Reset()
			inW = false
		}
	}
	endCommand := func() error {
		endWord()
		for len(words) > 0 && isAssignment(words[0]) {
			words = words[1:]
		}
		if len(words) > 0 {
			name := words[0]
			switch {
			case strings.ContainsAny(name, "$*?[~"):
				return errors.New("its command name " + name + " is expanded by the shell")
			case wrappers[baseName(name)]:
				return errors.New("it runs another command through " + name)
			}
			out = append(out, words)
		}
		words = nil
		return nil
	}
	for i := 0; i < len(command); i++ {
		c := command[i]
		switch c {
		case '\'':
			j := strings.IndexByte(command[i+1:], '\'')
			if j < 0 {
				return fail("an unbalanced single quote")
			}
			word.WriteString(command[i+1 : i+1+j])
			inW = true
			i += j + 1
		case '"':
			i++
			for ; i < len(command) && command[i] != '"'; i++ {
				switch command[i] {
				case '\\':
					if i+1 < len(command) && strings.IndexByte("$`\"\\\n", command[i+1]) >= 0 {
						i++
					}
				case '$', '`':
					return fail("an expansion inside double quotes")
				}
				word.WriteByte(command[i])
			}
			if i >= len(command) {
				return fail("an unbalanced double quote")
			}
			inW = true
		case '\\':
			if i+1 >= len(command) {
				return fail("a trailing backslash")
			}
			i++
			if command[i] != '\n' {
				word.WriteByte(command[i])
				inW = true
			}
		case '`', '(', ')', '{', '}':
			return fail("a subshell, group or command substitution (" + string(c) + ")")
		case '$':
			if i+1 < len(command) && (command[i+1] == '(' || command[i+1] == '{') {
				return fail("a command or parameter substitution ($" + string(command[i+1]) + ")")
			}
			// $VAR: the rules see it as written.
			word.WriteByte(c)
			inW = true
		case '<':
			if strings.HasPrefix(command[i:], "<<") || strings.HasPrefix(command[i:], "<(") {
				return fail("a here-document or process substitution")
			}
			endWord()
			words = append(words, "<")
		case '>':
			if strings.HasPrefix(command[i:], ">(") {
				return fail("a process substitution")
			}
			endWord()
			if i+1 < len(command) && (command[i+1] == '>' || command[i+1] == '&' || command[i+1] == '|') {
				i++ // >>, >& (2>&1) and >|
			}
			words = append(words, ">")
		case '&':
			if i+1 < len(command) && command[i+1] == '>' { // &> and &>>
				endWord()
				i++
				if i+1 < len(command) && command[i+1] == '>' {
					i++
				}
				words = append(words, ">")
				continue
			}
			if err := endCommand(); err != nil {
				return fail(err.Error())
			}
			if i+1 < len(command) && command[i+1] == '&' {
				i++
			}
		case ';', '|', '\n':
			if err := endCommand(); err != nil {
				return fail(err.Error())
			}
			if c == '|' && i+1 < len(command) && (command[i+1] == '|' || command[i+1] == '&') {
				i++ // || and |&
			}
		case ' ', '\t', '\r':
			endWord()
		case '#':
			if !inW { // a comment runs to the end of the line
				for i < len(command) && command[i] != '\n' {
					i++
				}
				i--
				continue
			}
			word.WriteByte(c)
		default:
			word.WriteByte(c)
			inW = true
		}
	}
	if err := endCommand(); err != nil {
		return fail(err.Error())
	}
	return out, nil
}

// isAssignment reports whether w is VAR=value.
func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
