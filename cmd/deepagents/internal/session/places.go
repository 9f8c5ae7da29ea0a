package session

import (
	"os"
	"path/filepath"
)

// Places are where the user's own files are.
type Places struct {
	// Home is the user's home directory: HOME, else the system's idea of
	// it; "" when there is none.
	Home string
	// UserDir is the user's own folder, whose memory, skills, subagents
	// and MCP servers every run reads: DEEPAGENTS_HOME, else
	// ~/.deepagents; "" without a home.
	UserDir string
	// ConfigHome is $XDG_CONFIG_HOME, by default ~/.config; "" without a
	// home.
	ConfigHome string
	// Config is the user's configuration file: config.yaml in
	// DEEPAGENTS_HOME when that is set, else in the XDG configuration
	// directory ($XDG_CONFIG_HOME/deepagents) when it has one, else in
	// ~/.deepagents; "" when there is no home.
	Config string
}

// Locate finds the user's places from the environment getenv reads. It
// looks whether the XDG configuration file exists, and nothing more.
func Locate(getenv func(string) string) Places {
	var p Places
	if p.Home = getenv("HOME"); p.Home == "" {
		p.Home, _ = os.UserHomeDir()
	}
	if p.UserDir = getenv("DEEPAGENTS_HOME"); p.UserDir == "" && p.Home != "" {
		p.UserDir = filepath.Join(p.Home, ".deepagents")
	}
	if p.ConfigHome = getenv("XDG_CONFIG_HOME"); p.ConfigHome == "" && p.Home != "" {
		p.ConfigHome = filepath.Join(p.Home, ".config")
	}
	if getenv("DEEPAGENTS_HOME") == "" && p.ConfigHome != "" {
		path := filepath.Join(p.ConfigHome, "deepagents", configFile)
		if _, err := os.Stat(path); err == nil {
			p.Config = path
			return p
		}
	}
	if p.UserDir != "" {
		p.Config = filepath.Join(p.UserDir, configFile)
	}
	return p
}

// MCPFile is the user's MCP configuration, for messages.
func (p Places) MCPFile() string {
	if p.UserDir != "" {
		return filepath.Join(p.UserDir, userMCPFile)
	}
	return filepath.Join("~", ".deepagents", userMCPFile)
}
