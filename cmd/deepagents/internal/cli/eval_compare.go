package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/deepagents-go/deepagents/eval"
)

// newEvalCompareCmd is deepagents eval compare: two scorecards that eval
// --json wrote, side by side.
func newEvalCompareCmd(env Env) *cobra.Command {
	var jsonOut, htmlOut string
	cmd := &cobra.Command{
		Use:   "compare [flags] A.json B.json",
		Short: "Compare two scorecards of eval --json, B against A",
		Long: `Compare two scorecards that deepagents eval --json wrote, B against A, in Markdown
on standard output: per task (a task in one only is marked) the pass@k of A and
of B, the difference B − A with a 95% interval for it (Newcombe's hybrid score
interval at pass@1; with k > 1 a bootstrap of the task's trials, marked †), and
the cost and tokens of each; then the mean pass@k over the tasks both have, with
a 95% interval for its difference (a two-stage percentile bootstrap, paired over
those tasks and over each task's trials, 10000 resamples from a fixed seed: the
same files give the same output). Another agent or k in B is
said in the header, not refused.

See docs/eval.md.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError{fmt.Errorf("eval compare takes two scorecards, A.json and B.json (got %d arguments)", len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var sides [2]*eval.Scorecard
			for i, p := range args {
				sc, err := eval.ReadScorecard(p)
				if err != nil {
					return usageError{err}
				}
				sides[i] = sc
			}
			c := eval.Compare(sides[0], sides[1])
			fmt.Fprint(env.Stdout, c.Markdown())
			if jsonOut != "" {
				b, err := json.MarshalIndent(c, "", "  ")
				if err != nil {
					return fmt.Errorf("--json: %w", err)
				}
				if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
					return fmt.Errorf("--json: %w", err)
				}
			}
			if htmlOut != "" {
				if err := writeHTML(htmlOut, c.HTML); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&jsonOut, "json", "", "also write the comparison to `FILE` as JSON")
	fl.StringVar(&htmlOut, "html", "", "also write the comparison to `FILE` as one self-contained HTML page (tables and inline SVG charts, no script)")
	return cmd
}

// writeHTML writes a page to path with write.
func writeHTML(path string, write func(w io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--html: %w", err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("--html: %w", errors.Join(err, os.Remove(path)))
	}
	return nil
}
