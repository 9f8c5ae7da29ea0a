package cli

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/hooks"
)

// newHooksCmd is deepagents hooks: the hook events and handler types this
// agent runs, for those who write hooks (or a tool that checks them).
func newHooksCmd(env Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "hooks [--json]",
		Short: "List the hook events and handler types this agent runs (docs/hooks.md)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if asJSON {
				type event struct {
					Name      hooks.Event `json:"name"`
					When      string      `json:"when"`
					MatchedOn string      `json:"matched_on,omitempty"`
				}
				out := struct {
					Events       []event  `json:"events"`
					HandlerTypes []string `json:"handler_types"`
				}{HandlerTypes: hooks.HandlerTypes}
				for _, e := range hooks.Events {
					a := hooks.Abouts[e]
					out.Events = append(out.Events, event{e, a.When, a.MatchedOn})
				}
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "EVENT\tWHEN\tMATCHER")
			for _, e := range hooks.Events {
				a := hooks.Abouts[e]
				fmt.Fprintf(tw, "%s\t%s\t%s\n", e, a.When, cmp.Or(a.MatchedOn, "(none: every hook of the event runs)"))
			}
			tw.Flush()
			fmt.Fprintf(env.Stdout, "\nhandler types: %s\n", strings.Join(hooks.HandlerTypes, ", "))
			fmt.Fprintln(env.Stdout, "read from: ~/.claude/settings.json, ~/.deepagents/config.yaml (hooks:), ~/.deepagents/hooks.json, installed plugins' hooks/hooks.json; the workspace's .claude/settings*.json, .deepagents/config.yaml and .deepagents/hooks.json with --trust-workspace")
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print them as JSON")
	return cmd
}
