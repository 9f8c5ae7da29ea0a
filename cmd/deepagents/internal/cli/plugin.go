package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/session"
	"github.com/deepagents-go/deepagents/internal/fsutil"
)

// deepagents plugin: Claude Code's (and Codex's) plugins installed into the
// user's folder, from a plugin folder or a local marketplace
// (docs/compatibility.md). An installed plugin is a copy: what its source
// becomes later changes nothing until it is installed again.

// Bounds of a plugin's copy.
const (
	maxPluginBytes = 64 << 20
	maxPluginFiles = 10_000
)

func newPluginCmd(env Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugin",
		Short: "Install, list and remove Claude Code and Codex plugins (skills, subagents, commands, hooks, MCP servers)",
	}
	var from string
	var force bool
	install := &cobra.Command{
		Use:   "install PATH | install NAME --from MARKETPLACE",
		Short: "Install a plugin folder, or a plugin of a local marketplace, into ~/.deepagents/plugins",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("plugin install needs one PATH (or NAME with --from)")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			userDir := session.Locate(env.Getenv).UserDir
			if userDir == "" {
				return errors.New("plugin install: no user folder (set HOME or DEEPAGENTS_HOME)")
			}
			src := args[0]
			if from != "" {
				var err error
				if src, err = fromMarketplace(from, args[0]); err != nil {
					return err
				}
			}
			p, err := session.ReadPlugin(src)
			if err != nil {
				return usageError{err}
			}
			dst := filepath.Join(userDir, session.PluginsFolder, p.Name)
			if _, err := os.Stat(dst); err == nil && !force {
				return usageError{fmt.Errorf("plugin %s is installed already (%s); --force replaces it", p.Name, dst)}
			}
			skipped, err := installPlugin(src, dst)
			if err != nil {
				return err
			}
			fmt.Fprintf(env.Stdout, "installed %s %s in %s\n", p.Name, p.Version, dst)
			if skipped > 0 {
				fmt.Fprintf(env.Stderr, "note: %d symbolic links of the plugin were not copied\n", skipped)
			}
			return nil
		},
	}
	install.Flags().StringVar(&from, "from", "", "a local marketplace: a folder with .claude-plugin/marketplace.json, or that file")
	install.Flags().BoolVar(&force, "force", false, "replace the plugin of that name if it is installed")
	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--json]",
		Short: "List the installed plugins",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ps, skipped := session.InstalledPlugins(session.Locate(env.Getenv).UserDir)
			for _, s := range skipped {
				fmt.Fprintf(env.Stderr, "note: left out %s\n", s)
			}
			if asJSON {
				if ps == nil {
					ps = []session.Plugin{}
				}
				return json.NewEncoder(env.Stdout).Encode(ps)
			}
			if len(ps) == 0 {
				fmt.Fprintln(env.Stdout, "no plugins installed; deepagents plugin install PATH installs one")
				return nil
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tVERSION\tDESCRIPTION")
			for _, p := range ps {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", p.Name, p.Version, p.Description)
			}
			return tw.Flush()
		},
	}
	list.Flags().BoolVar(&asJSON, "json", false, "print them as JSON")
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an installed plugin",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{errors.New("plugin remove needs one NAME")}
			}
			return nil
		},
		RunE: func(_ *cobra.Command, args []string) error {
			userDir := session.Locate(env.Getenv).UserDir
			ps, _ := session.InstalledPlugins(userDir)
			for _, p := range ps {
				if p.Name == args[0] {
					if err := os.RemoveAll(p.Dir); err != nil {
						return err
					}
					fmt.Fprintf(env.Stdout, "removed %s\n", p.Name)
					return nil
				}
			}
			return usageError{fmt.Errorf("no plugin %q is installed (deepagents plugin list)", args[0])}
		},
	}
	cmd.AddCommand(install, list, remove)
	return cmd
}

// fromMarketplace returns the folder of plugin name in the local
// marketplace at path: a source relative to the marketplace's folder.
func fromMarketplace(path, name string) (string, error) {
	file := path
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		file = filepath.Join(path, ".claude-plugin", "marketplace.json")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", usageError{fmt.Errorf("--from: %w", err)}
	}
	var m struct {
		Plugins []struct {
			Name   string          `json:"name"`
			Source json.RawMessage `json:"source"`
		} `json:"plugins"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", usageError{fmt.Errorf("--from %s: %w", file, err)}
	}
	// The marketplace's root: the folder holding .claude-plugin/.
	root := filepath.Dir(file)
	if filepath.Base(root) == ".claude-plugin" {
		root = filepath.Dir(root)
	}
	var names []string
	for _, p := range m.Plugins {
		names = append(names, p.Name)
		if p.Name != name {
			continue
		}
		var rel string
		if err := json.Unmarshal(p.Source, &rel); err != nil {
			return "", usageError{fmt.Errorf("plugin %s of %s has a source of its own kind (git, GitHub, a URL): only a local folder is installed here", name, file)}
		}
		dir := filepath.Join(root, filepath.FromSlash(rel))
		if r, err := filepath.Rel(root, dir); err != nil || !filepath.IsLocal(r) && r != "." {
			return "", usageError{fmt.Errorf("plugin %s of %s names a folder outside the marketplace (%s)", name, file, rel)}
		}
		return dir, nil
	}
	return "", usageError{fmt.Errorf("%s has no plugin %q (it has: %s)", file, name, strings.Join(names, ", "))}
}

// installPlugin copies src to dst (replacing it): folders and regular
// files, bounded, links skipped (and counted); a failure leaves dst as it
// was.
func installPlugin(src, dst string) (skipped int, err error) {
	// A link to the plugin's folder is the user's choice: its target is
	// copied (links inside it are not).
	if src, err = filepath.EvalSymlinks(src); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".installing-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	var size int64
	files := 0
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(tmp, rel)
		switch {
		case d.IsDir():
			if d.Name() == ".git" && p != src {
				return filepath.SkipDir
			}
			return os.MkdirAll(to, 0o755)
		case !d.Type().IsRegular():
			skipped++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if files++; files > maxPluginFiles {
			return fmt.Errorf("the plugin has more than %d files", maxPluginFiles)
		}
		if size += info.Size(); size > maxPluginBytes {
			return fmt.Errorf("the plugin is over %d MiB", maxPluginBytes>>20)
		}
		return fsutil.CopyFile(p, to, info.Mode().Perm()|0o200) // writable: a reinstall replaces it
	})
	if err != nil {
		return 0, fmt.Errorf("plugin install: %w", err)
	}
	old := filepath.Join(filepath.Dir(dst), ".old-"+filepath.Base(dst))
	os.RemoveAll(old)
	if _, err := os.Stat(dst); err == nil {
		if err := os.Rename(dst, old); err != nil {
			return 0, err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Rename(old, dst) //nolint:errcheck // put back what was there
		return 0, err
	}
	os.RemoveAll(old)
	return skipped, nil
}
