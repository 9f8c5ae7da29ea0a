package deepagents

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/deepagents-go/deepagents/agent"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/middleware"
	"github.com/deepagents-go/deepagents/store"
	"github.com/deepagents-go/deepagents/tool"
)

// The agent package's types, under the names users of this package reach
// for.
type (
	Agent         = agent.Agent
	Input         = agent.Input
	Result        = agent.Result
	State         = agent.State
	Todo          = agent.Todo
	Event         = agent.Event
	EventType     = agent.EventType
	Middleware    = agent.Middleware
	Decision      = agent.Decision
	ActionRequest = agent.ActionRequest
)

// Prompt returns an Input holding one user message.
func Prompt(text string) Input { return agent.Prompt(text) }

// Config describes a deep agent. Only Model is required.
type Config struct {
	// Name identifies the agent; "main" when empty.
	Name string
	// Model answers the agent's calls. Required.
	Model llm.Model
	// SystemPrompt is placed before the base prompt; leave it empty to use
	// the base prompt alone.
	SystemPrompt string
	// Tools are added to the built-in ones.
	Tools []tool.Tool
	// Middleware is added to the default stack after the built-in
	// middleware. One with the name of a built-in replaces it in place.
	Middleware []Middleware
	// MaxSteps caps the model calls of one run (see agent.Config).
	MaxSteps int
	// Checkpointer saves every step and makes threads resumable.
	Checkpointer checkpoint.Saver
	// Store is the cross-thread store.
	Store store.Store
	// Logger receives diagnostics.
	Logger *slog.Logger
}

// New returns a deep agent: the configured model with the default
// middleware stack (todos first), the configured tools and the base system
// prompt.
func New(cfg Config) (*Agent, error) {
	if cfg.Model == nil {
		return nil, errors.New("deepagents: Config.Model is required")
	}
	stack, err := buildStack([]Middleware{middleware.NewTodos()}, cfg.Middleware)
	if err != nil {
		return nil, err
	}
	prompt := BasePrompt
	if cfg.SystemPrompt != "" {
		prompt = cfg.SystemPrompt + "\n\n" + BasePrompt
	}
	return agent.New(agent.Config{
		Name:         cfg.Name,
		Model:        cfg.Model,
		SystemPrompt: prompt,
		Tools:        cfg.Tools,
		Middleware:   stack,
		MaxSteps:     cfg.MaxSteps,
		Checkpointer: cfg.Checkpointer,
		Store:        cfg.Store,
		Logger:       cfg.Logger,
	})
}

// buildStack appends user middleware to the defaults; a user middleware
// named like a default one takes its place.
func buildStack(defaults, user []Middleware) ([]Middleware, error) {
	stack := append([]Middleware(nil), defaults...)
	pos := make(map[string]int, len(stack))
	for i, m := range stack {
		pos[m.Name()] = i
	}
	for _, m := range user {
		if m == nil {
			return nil, errors.New("deepagents: nil middleware in Config.Middleware")
		}
		if i, ok := pos[m.Name()]; ok {
			if i < len(defaults) && stack[i] == defaults[i] {
				stack[i] = m
				continue
			}
			return nil, fmt.Errorf("deepagents: two middleware are named %q", m.Name())
		}
		pos[m.Name()] = len(stack)
		stack = append(stack, m)
	}
	return stack, nil
}
