package atif

import "encoding/json"

// SchemaVersion is the version of ATIF this package writes and its
// schema pins.
const SchemaVersion = "ATIF-v1.4"

// Trajectory is an ATIF trajectory: the root object of a file.
type Trajectory struct {
	SchemaVersion string `json:"schema_version"`
	// SessionID identifies the run.
	SessionID string `json:"session_id"`
	Agent     Agent  `json:"agent"`
	Steps     []Step `json:"steps"`
	// Notes explain how the trajectory departs from what the format
	// expects (final metrics that are not the sum of the steps', say).
	Notes        string         `json:"notes,omitempty"`
	FinalMetrics *FinalMetrics  `json:"final_metrics,omitempty"`
	Extra        map[string]any `json:"extra,omitempty"`
}

// Agent is the agent system a trajectory is of.
type Agent struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// ModelName is the model the steps use unless they say otherwise.
	ModelName string         `json:"model_name,omitempty"`
	Extra     map[string]any `json:"extra,omitempty"`
}

// Source is who a step comes from.
type Source string

// The sources of a step.
const (
	SourceSystem Source = "system"
	SourceUser   Source = "user"
	SourceAgent  Source = "agent"
)

// Step is one turn of a trajectory: a system prompt, a user message, or
// an agent's turn (its message, its tool calls and what they returned).
// ModelName, ReasoningEffort, ReasoningContent, ToolCalls and Metrics
// belong to agent steps only.
type Step struct {
	// StepID counts the steps from 1.
	StepID int `json:"step_id"`
	// Timestamp is when the step happened, in RFC 3339 (ISO 8601).
	Timestamp string `json:"timestamp,omitempty"`
	Source    Source `json:"source"`
	ModelName string `json:"model_name,omitempty"`
	// ReasoningEffort is a string ("low") or a number.
	ReasoningEffort  any            `json:"reasoning_effort,omitempty"`
	Message          string         `json:"message"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall     `json:"tool_calls,omitempty"`
	Observation      *Observation   `json:"observation,omitempty"`
	Metrics          *Metrics       `json:"metrics,omitempty"`
	Extra            map[string]any `json:"extra,omitempty"`
}

// ToolCall is one tool call of an agent step.
type ToolCall struct {
	ToolCallID   string `json:"tool_call_id"`
	FunctionName string `json:"function_name"`
	// Arguments is a JSON object.
	Arguments json.RawMessage `json:"arguments"`
}

// Observation is what a step's actions returned.
type Observation struct {
	Results []ObservationResult `json:"results"`
}

// ObservationResult is what one tool call (SourceCallID) or action
// returned, or the subagents it delegated to.
type ObservationResult struct {
	SourceCallID          string                  `json:"source_call_id,omitempty"`
	Content               *string                 `json:"content,omitempty"`
	SubagentTrajectoryRef []SubagentTrajectoryRef `json:"subagent_trajectory_ref,omitempty"`
}

// SubagentTrajectoryRef names the trajectory of a subagent: its session
// and, optionally, where its file is.
type SubagentTrajectoryRef struct {
	SessionID      string         `json:"session_id"`
	TrajectoryPath string         `json:"trajectory_path,omitempty"`
	Extra          map[string]any `json:"extra,omitempty"`
}

// Metrics are the model call of an agent step: PromptTokens counts every
// input token, CachedTokens those of them read from a cache.
type Metrics struct {
	PromptTokens       *int           `json:"prompt_tokens,omitempty"`
	CompletionTokens   *int           `json:"completion_tokens,omitempty"`
	CachedTokens       *int           `json:"cached_tokens,omitempty"`
	CostUSD            *float64       `json:"cost_usd,omitempty"`
	PromptTokenIDs     []int          `json:"prompt_token_ids,omitempty"`
	CompletionTokenIDs []int          `json:"completion_token_ids,omitempty"`
	Logprobs           []float64      `json:"logprobs,omitempty"`
	Extra              map[string]any `json:"extra,omitempty"`
}

// FinalMetrics are a trajectory's totals.
type FinalMetrics struct {
	TotalPromptTokens     *int           `json:"total_prompt_tokens,omitempty"`
	TotalCompletionTokens *int           `json:"total_completion_tokens,omitempty"`
	TotalCachedTokens     *int           `json:"total_cached_tokens,omitempty"`
	TotalCostUSD          *float64       `json:"total_cost_usd,omitempty"`
	TotalSteps            *int           `json:"total_steps,omitempty"`
	Extra                 map[string]any `json:"extra,omitempty"`
}
