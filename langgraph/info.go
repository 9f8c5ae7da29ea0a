package langgraph

import (
	"context"
	"net/http"
)

// Paths of the server itself: whether it is up, and what it is.
const (
	PathOK   = "/ok"
	PathInfo = "/info"
)

// Info is what GET /info answers: the server's version, and the parts of
// the API it offers (assistants, crons, ...).
type Info struct {
	Version string          `json:"version"`
	Flags   map[string]bool `json:"flags"`
}

// OK reports whether the server answers: nil when it does, and is up.
func (c *Client) OK(ctx context.Context) error {
	var out struct {
		OK bool `json:"ok"`
	}
	if err := c.Do(ctx, http.MethodGet, PathOK, nil, &out); err != nil {
		return err
	}
	if !out.OK {
		return &Error{Method: http.MethodGet, Path: PathOK, StatusCode: http.StatusOK, Message: `the server did not answer {"ok": true}`}
	}
	return nil
}

// Info returns what the server says of itself.
func (c *Client) Info(ctx context.Context) (*Info, error) {
	var out Info
	if err := c.Do(ctx, http.MethodGet, PathInfo, nil, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
