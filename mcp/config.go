package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// ErrConfig is wrapped by every error about a configuration: a file that is
// not JSON, an entry with neither a command nor a URL, a variable that is
// not set.
var ErrConfig = errors.New("mcp: bad configuration")

// Transport types a ServerConfig may name.
const (
	TypeStdio = "stdio"
	TypeHTTP  = "http" // streamable HTTP
	TypeSSE   = "sse"
)

// ServerConfig is one entry of a configuration's mcpServers, in the shape
// Claude Code and others read from .mcp.json: a command to start (stdio)
// or a URL to connect to (streamable HTTP, or SSE when Type says so).
type ServerConfig struct {
	// Type is "stdio", "http" or "sse"; empty means stdio when Command is
	// set and http when URL is. "streamable-http" is read as "http".
	Type string `json:"type,omitempty"`

	// Command, Args, Env and Cwd start a stdio server. The server's
	// environment is Env and, so that interpreters and npx work, only
	// HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG and TMPDIR of ours, as
	// the official TypeScript SDK does: no API key of this process leaks
	// to a server unless its entry passes it on.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`

	// URL and Headers reach a remote server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`

	// Timeout, in milliseconds, bounds one tool call; zero means
	// Options.CallTimeout.
	Timeout int `json:"timeout,omitempty"`

	// Disabled leaves the server out.
	Disabled bool `json:"disabled,omitempty"`
}

// transport returns the entry's transport type, checking that the entry
// has what that type needs.
func (c ServerConfig) transport() (string, error) {
	t := strings.ToLower(c.Type)
	switch t {
	case "":
		switch {
		case c.Command != "" && c.URL != "":
			return "", fmt.Errorf("%w: both a command and a url; give one", ErrConfig)
		case c.Command != "":
			t = TypeStdio
		case c.URL != "":
			t = TypeHTTP
		}
	case "streamable-http", "streamablehttp", "streamable_http":
		t = TypeHTTP
	}
	switch t {
	case TypeStdio:
		if c.Command == "" {
			return "", fmt.Errorf("%w: a stdio server needs a command", ErrConfig)
		}
	case TypeHTTP, TypeSSE:
		if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
			return "", fmt.Errorf("%w: a %s server needs an http:// or https:// url, not %q", ErrConfig, t, c.URL)
		}
	case "":
		return "", fmt.Errorf("%w: neither a command nor a url", ErrConfig)
	default:
		return "", fmt.Errorf("%w: unknown type %q (stdio, http or sse)", ErrConfig, c.Type)
	}
	if c.Timeout < 0 {
		return "", fmt.Errorf("%w: a negative timeout", ErrConfig)
	}
	return t, nil
}

// file is the shape of a .mcp.json file.
type file struct {
	MCPServers map[string]ServerConfig `json:"mcpServers"`
}

// LoadFile reads the mcpServers of a .mcp.json file. ${VAR} and
// ${VAR:-default} in commands, arguments, environment values, URLs and
// headers are replaced with getenv's values (os.Getenv when nil); a
// variable that is not set and has no default is an error, so that a
// server never starts with a half-made command line. Disabled servers are
// left out.
func LoadFile(path string, getenv func(string) string) (map[string]ServerConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	servers, err := Parse(data, getenv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return servers, nil
}

// Parse is LoadFile for a file's contents.
func Parse(data []byte, getenv func(string) string) (map[string]ServerConfig, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	out := make(map[string]ServerConfig, len(f.MCPServers))
	for name, c := range f.MCPServers {
		if c.Disabled {
			continue
		}
		if err := checkName(name); err != nil {
			return nil, err
		}
		c, err := expandConfig(c, getenv)
		if err == nil {
			_, err = c.transport()
		}
		if err != nil {
			return nil, fmt.Errorf("server %q: %w", name, err)
		}
		out[name] = c
	}
	return out, nil
}

// checkName refuses server names that cannot be part of a tool name.
func checkName(name string) error {
	if name == "" || strings.Contains(name, "__") || !validName.MatchString(name) {
		return fmt.Errorf("%w: server name %q: use letters, digits, - and single _", ErrConfig, name)
	}
	return nil
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces the ${VAR} and ${VAR:-default} references in s.
func expand(s string, getenv func(string) string) (string, error) {
	var missing []string
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := varRef.FindStringSubmatch(ref)
		if v := getenv(m[1]); v != "" {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		missing = append(missing, m[1])
		return ""
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("%w: the variable %s is not set", ErrConfig, missing[0])
	}
	return out, nil
}

func expandConfig(c ServerConfig, getenv func(string) string) (ServerConfig, error) {
	var err error
	one := func(s string) string {
		if err != nil {
			return s
		}
		var v string
		v, err = expand(s, getenv)
		return v
	}
	c.Command, c.URL, c.Cwd = one(c.Command), one(c.URL), one(c.Cwd)
	c.Args = slices.Clone(c.Args)
	for i := range c.Args {
		c.Args[i] = one(c.Args[i])
	}
	c.Env = expandMap(c.Env, one)
	c.Headers = expandMap(c.Headers, one)
	return c, err
}

func expandMap(m map[string]string, one func(string) string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = one(v)
	}
	return out
}
