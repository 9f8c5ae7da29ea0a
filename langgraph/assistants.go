package langgraph

import "time"

// Paths of the assistants API.
const (
	PathAssistants      = "/assistants"
	PathAssistantSearch = PathAssistants + "/search"
	PathAssistant       = PathAssistants + "/{assistant_id}"
)

// Assistant is an agent a server offers: a graph with its configuration.
type Assistant struct {
	AssistantID string         `json:"assistant_id,omitempty"`
	GraphID     string         `json:"graph_id"`
	Name        string         `json:"name"`
	Description *string        `json:"description"`
	Config      map[string]any `json:"config"`
	Context     map[string]any `json:"context"`
	Metadata    map[string]any `json:"metadata"`
	Version     int            `json:"version"`
	CreatedAt   time.Time      `json:"created_at"`
	UpdatedAt   time.Time      `json:"updated_at"`
}

// AssistantCreate is the body of POST /assistants.
type AssistantCreate struct {
	Assistant
	IfExists string `json:"if_exists,omitempty"`
}

// AssistantSearch is the body of POST /assistants/search.
type AssistantSearch struct {
	GraphID  string         `json:"graph_id,omitempty"`
	Name     string         `json:"name,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Limit    *int           `json:"limit,omitempty"`
	Offset   int            `json:"offset,omitempty"`
}
