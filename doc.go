// Package deepagents is an agent harness for Go: a tool-calling model gets a
// planning tool, a virtual filesystem on pluggable backends, subagents,
// automatic summarization of long contexts, memory and skills, human
// approval, prompt caching and checkpointed threads.
//
// [New] assembles an agent with the default middleware stack; the agent
// package holds the run loop it is built on, so [Agent], [State], [Event]
// and the rest are the agent package's types under shorter names.
//
//	a, err := deepagents.New(deepagents.Config{Model: model})
//	res, err := a.Invoke(ctx, deepagents.Prompt("Summarise the repository"))
//	fmt.Println(res.Text())
package deepagents
