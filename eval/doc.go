// Package eval runs benchmark tasks in Harbor's format (the format of
// Terminal-Bench 2.0) against an agent and scores them: pass@k and avg@k
// per task and in all, with what each trial cost.
//
// A task is a folder: instruction.md (what the agent is asked), task.toml
// (the agent's and the verifier's timeouts, resources, metadata),
// environment/ (the files the agent starts from; a Dockerfile there is
// not built by the sandbox environment), tests/test.sh (the verifier,
// which writes /logs/verifier/reward.txt or reward.json) and
// solution/solve.sh (the oracle's answer). A dataset is a folder of tasks.
//
// Each trial runs in a sandbox (sandbox.Bubblewrap) over a fresh copy of
// the task's environment: the agent works there, then the verifier runs
// in the same folder with the tests mounted at /tests only then (the agent
// never sees them) and /logs/verifier writable. The oracle agent runs
// solution/solve.sh (mounted at /solution): a dataset's self-check.
//
// A Scorecard writes itself as Markdown and as a self-contained HTML page
// (Scorecard.HTML); Compare sets two side by side, with confidence
// intervals for their differences. A trial log (CreateLog, ReadLog,
// AppendLog) keeps each finished trial on disk as it ends, so that an
// eval cut short resumes (Config.Skip) with only the trials it lacks.
package eval
