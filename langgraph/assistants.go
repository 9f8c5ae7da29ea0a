package langgraph

import (
	"context"
	"net/http"
	"time"
)

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

// SearchAssistants lists the assistants a search finds: the server's
// graphs' own, and those clients created.
func (c *Client) SearchAssistants(ctx context.Context, q AssistantSearch) ([]Assistant, error) {
	var out []Assistant
	if err := c.Do(ctx, http.MethodPost, PathAssistantSearch, q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// GetAssistant returns an assistant by its ID or its graph ID.
func (c *Client) GetAssistant(ctx context.Context, assistantID string) (*Assistant, error) {
	var out Assistant
	if err := c.Do(ctx, http.MethodGet, c.path(PathAssistant, assistantID), nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateAssistant creates an assistant of one of the server's graphs
// (q.GraphID), with its own name, metadata, config and context.
func (c *Client) CreateAssistant(ctx context.Context, q AssistantCreate) (*Assistant, error) {
	var out Assistant
	if err := c.Do(ctx, http.MethodPost, PathAssistants, q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
