package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Plugins are Claude Code's (and Codex's) plugin folders, installed by the
// user into ~/.deepagents/plugins (deepagents plugin install): each holds
// a manifest (.claude-plugin/plugin.json or .codex-plugin/plugin.json) and
// any of skills/, agents/, commands/, hooks/hooks.json and .mcp.json,
// which the session reads as the user's own, below the user's files of
// the same names (docs/compatibility.md).

// PluginsFolder is the folder of the user's folder plugins are installed
// in.
const PluginsFolder = "plugins"

// pluginManifests are where a plugin's manifest may be, in order.
var pluginManifests = []string{".claude-plugin/plugin.json", ".codex-plugin/plugin.json"}

// Plugin is an installed plugin.
type Plugin struct {
	// Name is its manifest's name, the name of its folder.
	Name string `json:"name"`
	// Version and Description are its manifest's.
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	// Dir is its folder.
	Dir string `json:"-"`
}

// ReadPlugin reads the manifest of the plugin in dir.
func ReadPlugin(dir string) (Plugin, error) {
	for _, m := range pluginManifests {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(m)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return Plugin{}, err
		}
		var p Plugin
		if err := json.Unmarshal(data, &p); err != nil {
			return Plugin{}, fmt.Errorf("%s: %w", m, err)
		}
		if !plainName(p.Name) {
			return Plugin{}, fmt.Errorf("%s: the plugin's name %q is not a name (letters, digits, - and _)", m, p.Name)
		}
		p.Dir = dir
		return p, nil
	}
	return Plugin{}, fmt.Errorf("%s holds no plugin: it has no %s", dir, strings.Join(pluginManifests, " or "))
}

// InstalledPlugins lists the plugins of userDir, in name order; a folder
// that holds none is named in skipped.
func InstalledPlugins(userDir string) (plugins []Plugin, skipped []string) {
	if userDir == "" {
		return nil, nil
	}
	entries, _ := os.ReadDir(filepath.Join(userDir, PluginsFolder))
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") { // an install under way
			continue
		}
		p, err := ReadPlugin(filepath.Join(userDir, PluginsFolder, e.Name()))
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", e.Name(), err))
			continue
		}
		plugins = append(plugins, p)
	}
	slices.SortFunc(plugins, func(a, b Plugin) int { return strings.Compare(a.Name, b.Name) })
	return plugins, skipped
}

// plugins are the user's installed plugins, read once; a folder that holds
// none is noted.
func (r *resolver) plugins() []Plugin {
	if r.pluginsRead || r.in.Assistant != nil {
		return r.pluginList
	}
	r.pluginsRead = true
	ps, skipped := InstalledPlugins(r.in.Places.UserDir)
	if len(skipped) > 0 {
		r.note("note: %s: left out %s", filepath.Join(r.in.Places.UserDir, PluginsFolder), strings.Join(skipped, "; "))
	}
	r.pluginList = ps
	return ps
}

// pluginRoot is what a plugin's files write for its folder.
var pluginRoot = []string{"${CLAUDE_PLUGIN_ROOT}", "$CLAUDE_PLUGIN_ROOT"}

// withPluginRoot returns s with the plugin's folder for pluginRoot.
func withPluginRoot(s, dir string) string {
	for _, v := range pluginRoot {
		s = strings.ReplaceAll(s, v, dir)
	}
	return s
}

// pluginSkills are the skill folders of the installed plugins, as the
// agent sees them (below /user/).
func (r *resolver) pluginSkills() []string {
	var out []string
	for _, p := range r.plugins() {
		if st, err := os.Stat(filepath.Join(p.Dir, "skills")); err == nil && st.IsDir() {
			out = append(out, "/user/"+PluginsFolder+"/"+filepath.Base(p.Dir)+"/skills/")
		}
	}
	return out
}
