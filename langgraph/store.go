package langgraph

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Paths of the store API (the LangGraph SDK's client.store): items under
// namespaces, the agents' long-term memory.
const (
	PathStoreItems      = "/store/items"
	PathStoreSearch     = PathStoreItems + "/search"
	PathStoreNamespaces = "/store/namespaces"
)

// Item is an item of the store.
type Item struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
}

// ItemPut is the body of PUT /store/items. A namespace's labels are not
// empty and hold no period.
type ItemPut struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
}

// ItemSearch is the body of POST /store/items/search.
type ItemSearch struct {
	NamespacePrefix []string `json:"namespace_prefix"`
	// Filter keeps the items whose values hold these fields.
	Filter map[string]any `json:"filter,omitempty"`
	// Limit is at most 1000; nil means 10.
	Limit  *int `json:"limit,omitempty"`
	Offset int  `json:"offset,omitempty"`
}

// NamespaceSearch is the body of POST /store/namespaces.
type NamespaceSearch struct {
	Prefix []string `json:"prefix,omitempty"`
	Suffix []string `json:"suffix,omitempty"`
	// MaxDepth, when set, cuts each namespace to that many labels.
	MaxDepth *int `json:"max_depth,omitempty"`
	// Limit is at most 1000; nil means 100.
	Limit  *int `json:"limit,omitempty"`
	Offset int  `json:"offset,omitempty"`
}

// PutItem writes an item.
func (c *Client) PutItem(ctx context.Context, q ItemPut) error {
	return c.Do(ctx, http.MethodPut, PathStoreItems, q, nil)
}

// GetItem reads an item; nil, nil when there is none.
func (c *Client) GetItem(ctx context.Context, namespace []string, key string) (*Item, error) {
	qs := url.Values{"key": {key}}
	if len(namespace) > 0 {
		qs.Set("namespace", strings.Join(namespace, "."))
	}
	var out *Item
	if err := c.Do(ctx, http.MethodGet, PathStoreItems+"?"+qs.Encode(), nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteItem deletes an item; deleting one that is not there is no error.
func (c *Client) DeleteItem(ctx context.Context, namespace []string, key string) error {
	return c.Do(ctx, http.MethodDelete, PathStoreItems, map[string]any{"namespace": namespace, "key": key}, nil)
}

// SearchItems lists the items under a namespace prefix, in the store's
// order (namespace, then key).
func (c *Client) SearchItems(ctx context.Context, q ItemSearch) ([]Item, error) {
	var out struct {
		Items []Item `json:"items"`
	}
	if err := c.Do(ctx, http.MethodPost, PathStoreSearch, q, &out); err != nil {
		return nil, err
	}
	return out.Items, nil
}

// ListNamespaces lists the namespaces that hold items.
func (c *Client) ListNamespaces(ctx context.Context, q NamespaceSearch) ([][]string, error) {
	var out struct {
		Namespaces [][]string `json:"namespaces"`
	}
	if err := c.Do(ctx, http.MethodPost, PathStoreNamespaces, q, &out); err != nil {
		return nil, err
	}
	return out.Namespaces, nil
}
