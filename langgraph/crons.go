package langgraph

import (
	"context"
	"net/http"
	"time"
)

// Paths of the crons API (the LangGraph SDK's client.crons): crons start
// runs on a schedule, on a thread or each on a new one.
const (
	PathCrons       = "/runs/crons"
	PathCron        = PathCrons + "/{cron_id}"
	PathCronSearch  = PathCrons + "/search"
	PathCronCount   = PathCrons + "/count"
	PathThreadCrons = PathRuns + "/crons"
)

// Cron is a schedule of runs, as the crons API answers it.
type Cron struct {
	CronID      string `json:"cron_id"`
	AssistantID string `json:"assistant_id"`
	// ThreadID is the thread each firing runs on; nil for a stateless
	// cron, whose firings each run on a new thread.
	ThreadID *string `json:"thread_id"`
	// OnRunCompleted is what becomes of a stateless firing's thread
	// when its run ends: "delete" (the default) or "keep".
	OnRunCompleted string `json:"on_run_completed,omitempty"`
	// EndTime, when set, is when the cron stops firing.
	EndTime *time.Time `json:"end_time"`
	// Schedule is a 5-field cron schedule (minute hour day-of-month
	// month day-of-week) or a descriptor such as @hourly, read in
	// Timezone (UTC when unset).
	Schedule  string    `json:"schedule"`
	Timezone  *string   `json:"timezone"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	// Payload is the run each firing starts, as a RunCreate's fields.
	Payload map[string]any `json:"payload"`
	UserID  *string        `json:"user_id"`
	// NextRunDate is the next firing; nil when there is none.
	NextRunDate *time.Time     `json:"next_run_date"`
	Metadata    map[string]any `json:"metadata"`
	Enabled     bool           `json:"enabled"`
}

// CronCreate is the body of POST /runs/crons and
// /threads/{thread_id}/runs/crons, and of PATCH /runs/crons/{cron_id}
// (whose fields sent replace the cron's; its assistant cannot change):
// the cron's own fields, and the run each firing starts. Metadata is the
// cron's and its runs'.
type CronCreate struct {
	Schedule       string     `json:"schedule,omitempty"`
	Timezone       string     `json:"timezone,omitempty"`
	EndTime        *time.Time `json:"end_time,omitempty"`
	Enabled        *bool      `json:"enabled,omitempty"`
	OnRunCompleted string     `json:"on_run_completed,omitempty"`
	RunCreate
}

// CronPatch is the body of PATCH /runs/crons/{cron_id}: CronCreate's
// fields but the assistant's, each replacing the cron's when sent.
type CronPatch struct {
	Schedule       string         `json:"schedule,omitempty"`
	Timezone       string         `json:"timezone,omitempty"`
	EndTime        *time.Time     `json:"end_time,omitempty"`
	Enabled        *bool          `json:"enabled,omitempty"`
	OnRunCompleted string         `json:"on_run_completed,omitempty"`
	Input          *Input         `json:"input,omitempty"`
	Metadata       map[string]any `json:"metadata,omitempty"`
}

// CronSearch is the body of POST /runs/crons/search and /count (which
// reads only the filters: AssistantID, ThreadID, Enabled, Metadata).
type CronSearch struct {
	AssistantID string         `json:"assistant_id,omitempty"`
	ThreadID    string         `json:"thread_id,omitempty"`
	Enabled     *bool          `json:"enabled,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
	// Limit is at most 1000; nil means 10.
	Limit  *int `json:"limit,omitempty"`
	Offset int  `json:"offset,omitempty"`
	// SortBy is one of cron_id, assistant_id, thread_id, next_run_date,
	// end_time, created_at (the default) and updated_at; SortOrder is asc
	// or desc (the default).
	SortBy    string `json:"sort_by,omitempty"`
	SortOrder string `json:"sort_order,omitempty"`
	// Select keeps only these fields of each cron.
	Select []string `json:"select,omitempty"`
}

// CreateCron creates a stateless cron: each firing runs on a new thread.
func (c *Client) CreateCron(ctx context.Context, q CronCreate) (*Cron, error) {
	var out Cron
	if err := c.Do(ctx, http.MethodPost, PathCrons, q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateThreadCron creates a cron whose firings run on a thread.
func (c *Client) CreateThreadCron(ctx context.Context, threadID string, q CronCreate) (*Cron, error) {
	var out Cron
	if err := c.Do(ctx, http.MethodPost, c.path(PathThreadCrons, threadID), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateCron changes a cron.
func (c *Client) UpdateCron(ctx context.Context, cronID string, q CronPatch) (*Cron, error) {
	var out Cron
	if err := c.Do(ctx, http.MethodPatch, c.path(PathCron, cronID), q, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// DeleteCron deletes a cron.
func (c *Client) DeleteCron(ctx context.Context, cronID string) error {
	return c.Do(ctx, http.MethodDelete, c.path(PathCron, cronID), nil, nil)
}

// SearchCrons lists the crons a search finds. With Select, the fields
// left out are zero.
func (c *Client) SearchCrons(ctx context.Context, q CronSearch) ([]Cron, error) {
	var out []Cron
	if err := c.Do(ctx, http.MethodPost, PathCronSearch, q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// CountCrons counts the crons a search's filters find.
func (c *Client) CountCrons(ctx context.Context, q CronSearch) (int, error) {
	var n int
	if err := c.Do(ctx, http.MethodPost, PathCronCount, q, &n); err != nil {
		return 0, err
	}
	return n, nil
}
