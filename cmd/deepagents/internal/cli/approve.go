package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/deepagents-go/deepagents"

	"github.com/deepagents-go/deepagents/cmd/deepagents/internal/display"
)

// parseDecisions reads --decision values.
func parseDecisions(vals []string) ([]deepagents.Decision, error) {
	if len(vals) == 0 {
		return nil, errors.New("resume needs a --decision for each pending action (approve, reject:REASON or edit:JSON-ARGS)")
	}
	out := make([]deepagents.Decision, 0, len(vals))
	for _, v := range vals {
		d, err := parseDecision(v)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// decisionForms are the forms of --decision, for messages.
const decisionForms = "approve, reject:REASON or edit:JSON-ARGS"

// parseDecision reads one --decision value. Anything but the forms it
// knows is an error, so that a decision never means less than was typed
// (approve:{...} is not an approval of other arguments).
func parseDecision(v string) (deepagents.Decision, error) {
	kind, arg, hasArg := strings.Cut(v, ":")
	switch strings.TrimSpace(kind) {
	case "approve":
		if hasArg {
			return deepagents.Decision{}, fmt.Errorf("--decision %q: approve takes nothing after it (to run the call with other arguments, give edit:JSON-ARGS); want %s", v, decisionForms)
		}
		return deepagents.Decision{Type: deepagents.DecisionApprove}, nil
	case "reject":
		return deepagents.Decision{Type: deepagents.DecisionReject, Message: strings.TrimSpace(arg)}, nil
	case "edit":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(arg), &obj); err != nil {
			return deepagents.Decision{}, fmt.Errorf("--decision %q: edit needs the new arguments as a JSON object: %v", v, err)
		}
		return deepagents.Decision{Type: deepagents.DecisionEdit, Args: json.RawMessage(arg)}, nil
	}
	return deepagents.Decision{}, fmt.Errorf("--decision %q: want %s", v, decisionForms)
}

// askDecisions asks on the terminal for a decision on each request.
func askDecisions(env Env, reqs []deepagents.ActionRequest) ([]deepagents.Decision, error) {
	in := bufio.NewReader(env.Stdin)
	out := make([]deepagents.Decision, 0, len(reqs))
	for i, r := range reqs {
		who := ""
		if by := display.AskedBy(r.Namespace); by != "" {
			who = " from " + by
		}
		fmt.Fprintf(env.Stderr, "\nApproval needed (%d of %d)%s: %s\n  %s\n", i+1, len(reqs), who, r.Tool, display.Clip(string(r.Args), 2000))
		for {
			fmt.Fprint(env.Stderr, "[a]pprove, [e]dit, [r]eject? ")
			line, err := in.ReadString('\n')
			if err != nil && line == "" {
				return nil, fmt.Errorf("reading a decision: %w", err)
			}
			switch strings.ToLower(strings.TrimSpace(line)) {
			case "a", "approve", "y", "yes":
				out = append(out, deepagents.Decision{Type: deepagents.DecisionApprove})
			case "r", "reject", "n", "no":
				fmt.Fprint(env.Stderr, "Reason (the agent sees it): ")
				reason, _ := in.ReadString('\n')
				out = append(out, deepagents.Decision{Type: deepagents.DecisionReject, Message: strings.TrimSpace(reason)})
			case "e", "edit":
				fmt.Fprint(env.Stderr, "New arguments (one line of JSON): ")
				args, _ := in.ReadString('\n')
				d, err := parseDecision("edit:" + strings.TrimSpace(args))
				if err != nil {
					fmt.Fprintln(env.Stderr, err)
					continue
				}
				out = append(out, d)
			default:
				continue
			}
			break
		}
	}
	return out, nil
}
