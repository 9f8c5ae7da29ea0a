// Package atif writes the trajectories of agent runs in ATIF, the Agent
// Trajectory Interchange Format of the Harbor framework
// (github.com/laude-institute/harbor, RFC 0001), version ATIF-v1.4.
//
// A [Builder] turns the events of a run ([agent.Event], as Stream yields
// them) into a [Trajectory]: the user's prompt as the first step, then one
// agent step per assistant message, with its text, its reasoning, its tool
// calls, the results of those calls as the step's observation, and the
// model call's tokens and cost as its metrics. A subagent's events become
// a trajectory of their own, which the step that delegated to it
// references (subagent_trajectory_ref).
//
// [Validate] checks a trajectory's JSON against the pinned schema
// (schema.json, a JSON Schema derived from Harbor's specification; see
// README.md next to it for its source) and against the rules a schema
// cannot say: step_ids count from 1, and an observation answers a tool
// call of its own step.
package atif
