package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/deepagents-go/deepagents/langgraph"
	"github.com/deepagents-go/deepagents/store"
)

// The store API (LangGraph's /store): the items of the server's store
// (Config.Store, shared by the replicas, or one in memory), which agents
// read and write as long-term memory. The server keeps its own records
// (runs, replicas, crons, thread metadata, assistants) in the same store
// under serverNamespace: clients can neither read nor write those.

// serverNamespace is the prefix of the namespaces the server keeps its
// records under.
var serverNamespace = []string{"deepagents", "server"}

// Bounds of a store request, as the reference server's.
const (
	maxStoreLimit  = 1000
	storePageBatch = 1000
)

func (s *Server) storeRoutes(m *http.ServeMux) {
	m.HandleFunc("PUT "+langgraph.PathStoreItems, s.putItem)
	m.HandleFunc("GET "+langgraph.PathStoreItems, s.getItem)
	m.HandleFunc("DELETE "+langgraph.PathStoreItems, s.deleteItem)
	m.HandleFunc("POST "+langgraph.PathStoreSearch, s.searchItems)
	m.HandleFunc("POST "+langgraph.PathStoreNamespaces, s.listNamespaces)
}

// checkNamespace answers a namespace the store API refuses: none (400),
// an empty label or one with a period (422, as the SDK joins labels with
// periods in a GET), or one of the server's own (403).
func checkNamespace(w http.ResponseWriter, ns []string, required bool) bool {
	if len(ns) == 0 {
		if required {
			httpError(w, http.StatusBadRequest, "Namespace is required")
			return false
		}
		return true
	}
	for _, label := range ns {
		if label == "" || strings.Contains(label, ".") {
			httpError(w, http.StatusUnprocessableEntity, "Namespace labels cannot be empty or contain periods. Received: "+strings.Join(ns, "."))
			return false
		}
	}
	if store.HasPrefix(ns, serverNamespace) {
		httpError(w, http.StatusForbidden, fmt.Sprintf("Namespace %s is reserved for the server's own records", strings.Join(serverNamespace, ".")))
		return false
	}
	return true
}

// coversServer reports whether a search under prefix would reach the
// server's records (prefix is shorter than serverNamespace and starts it).
func coversServer(prefix []string) bool {
	return len(prefix) < len(serverNamespace) && slices.Equal(prefix, serverNamespace[:len(prefix)])
}

// storeItemRequest is the body of PUT and DELETE /store/items.
type storeItemRequest struct {
	Namespace *[]string       `json:"namespace"`
	Key       *string         `json:"key"`
	Value     *map[string]any `json:"value"`
	// TTL (minutes) is refused: the store keeps items until deleted.
	TTL *float64 `json:"ttl"`
	// Index is accepted and ignored: the store has no semantic search.
	Index any `json:"index"`
}

func (s *Server) putItem(w http.ResponseWriter, r *http.Request) {
	var q storeItemRequest
	if !readJSON(w, r, &q) {
		return
	}
	switch {
	case q.Namespace == nil:
		validationError(w, "namespace", "Required")
		return
	case q.Key == nil:
		validationError(w, "key", "Required")
		return
	case q.Value == nil:
		validationError(w, "value", "Required")
		return
	case q.TTL != nil:
		validationError(w, "ttl", "This server keeps store items until they are deleted: ttl is not supported")
		return
	}
	if !checkNamespace(w, *q.Namespace, true) {
		return
	}
	if err := s.store.Put(r.Context(), *q.Namespace, *q.Key, *q.Value); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) deleteItem(w http.ResponseWriter, r *http.Request) {
	var q storeItemRequest
	if !readJSON(w, r, &q) {
		return
	}
	if q.Key == nil {
		validationError(w, "key", "Required")
		return
	}
	var ns []string
	if q.Namespace != nil {
		ns = *q.Namespace
	}
	if !checkNamespace(w, ns, false) {
		return
	}
	if err := s.store.Delete(r.Context(), ns, *q.Key); err != nil {
		storeError(w, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// getItem answers the item, or null when there is none (as the reference
// server does, and the SDK's getItem expects).
func (s *Server) getItem(w http.ResponseWriter, r *http.Request) {
	qs := r.URL.Query()
	if !qs.Has("key") {
		validationError(w, "key", "Required")
		return
	}
	var ns []string
	if v := qs.Get("namespace"); v != "" {
		ns = strings.Split(v, ".")
	}
	if !checkNamespace(w, ns, false) {
		return
	}
	it, err := s.store.Get(r.Context(), ns, qs.Get("key"))
	if errors.Is(err, store.ErrNotFound) {
		writeJSON(w, http.StatusOK, nil)
		return
	}
	if err != nil {
		storeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, it)
}

// storeSearchRequest is the body of POST /store/items/search.
type storeSearchRequest struct {
	NamespacePrefix []string       `json:"namespace_prefix"`
	Filter          map[string]any `json:"filter"`
	Limit           *int           `json:"limit"`
	Offset          int            `json:"offset"`
	// Query (semantic search) is accepted and ignored: the store has no
	// index, so items are listed as without one.
	Query any `json:"query"`
}

func (s *Server) searchItems(w http.ResponseWriter, r *http.Request) {
	var q storeSearchRequest
	if !readJSON(w, r, &q) {
		return
	}
	limit, ok := pageBounds(w, q.Limit, 10, q.Offset)
	if !ok || !checkNamespace(w, q.NamespacePrefix, false) {
		return
	}
	ctx := r.Context()
	var items []store.Item
	if !coversServer(q.NamespacePrefix) {
		var err error
		if items, err = s.store.Search(ctx, q.NamespacePrefix, store.SearchOptions{Filter: q.Filter, Limit: limit, Offset: q.Offset}); err != nil {
			storeError(w, err)
			return
		}
	} else {
		// The server's records are left out, so the page is counted here:
		// the store's order (namespace, key) keeps them in one block.
		skip := q.Offset
		for from := 0; len(items) < limit; from += storePageBatch {
			batch, err := s.store.Search(ctx, q.NamespacePrefix, store.SearchOptions{Filter: q.Filter, Limit: storePageBatch, Offset: from})
			if err != nil {
				storeError(w, err)
				return
			}
			for _, it := range batch {
				if store.HasPrefix(it.Namespace, serverNamespace) || len(items) == limit {
					continue
				}
				if skip > 0 {
					skip--
					continue
				}
				items = append(items, it)
			}
			if len(batch) < storePageBatch {
				break
			}
		}
	}
	if items == nil {
		items = []store.Item{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"items": items})
}

// storeNamespacesRequest is the body of POST /store/namespaces.
type storeNamespacesRequest struct {
	Prefix   []string `json:"prefix"`
	Suffix   []string `json:"suffix"`
	MaxDepth *int     `json:"max_depth"`
	Limit    *int     `json:"limit"`
	Offset   int      `json:"offset"`
}

// listNamespaces lists the namespaces holding items: those under prefix
// ending with suffix, cut to max_depth labels, without the server's own.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var q storeNamespacesRequest
	if !readJSON(w, r, &q) {
		return
	}
	limit, ok := pageBounds(w, q.Limit, 100, q.Offset)
	if !ok || !checkNamespace(w, q.Prefix, false) {
		return
	}
	for _, label := range q.Suffix {
		if label == "" || strings.Contains(label, ".") {
			httpError(w, http.StatusUnprocessableEntity, "Namespace labels cannot be empty or contain periods. Received: "+strings.Join(q.Suffix, "."))
			return
		}
	}
	depth := 0
	if q.MaxDepth != nil {
		if *q.MaxDepth <= 0 {
			validationError(w, "max_depth", "Number must be greater than 0")
			return
		}
		depth = *q.MaxDepth
	}
	// Suffixes and the server's records are filtered here, on whole
	// namespaces, before they are cut to depth.
	var all [][]string
	for from := 0; ; from += storePageBatch {
		batch, err := s.store.ListNamespaces(r.Context(), store.NamespaceOptions{Prefix: q.Prefix, Limit: storePageBatch, Offset: from})
		if err != nil {
			storeError(w, err)
			return
		}
		all = append(all, batch...)
		if len(batch) < storePageBatch {
			break
		}
	}
	out := [][]string{}
	for _, ns := range all {
		if store.HasPrefix(ns, serverNamespace) {
			continue
		}
		if len(q.Suffix) > 0 && (len(ns) < len(q.Suffix) || !slices.Equal(ns[len(ns)-len(q.Suffix):], q.Suffix)) {
			continue
		}
		if depth > 0 && len(ns) > depth {
			ns = ns[:depth]
		}
		if n := len(out); n > 0 && slices.Equal(out[n-1], ns) {
			continue
		}
		out = append(out, ns)
	}
	slices.SortFunc(out, slices.Compare)
	out = slices.CompactFunc(out, slices.Equal)
	if q.Offset >= len(out) {
		out = out[:0]
	} else {
		out = out[q.Offset:min(len(out), q.Offset+limit)]
	}
	writeJSON(w, http.StatusOK, map[string]any{"namespaces": out})
}

// pageBounds checks a request's limit (def when unset) and offset,
// answering 422 for ones out of bounds.
func pageBounds(w http.ResponseWriter, limit *int, def, offset int) (int, bool) {
	n := def
	if limit != nil {
		n = *limit
	}
	if n < 1 || n > maxStoreLimit {
		validationError(w, "limit", "Number must be between 1 and "+strconv.Itoa(maxStoreLimit))
		return 0, false
	}
	if offset < 0 {
		validationError(w, "offset", "Number must be greater than or equal to 0")
		return 0, false
	}
	return n, true
}

// storeError answers a store failure.
func storeError(w http.ResponseWriter, err error) {
	if errors.Is(err, context.Canceled) {
		httpError(w, 499, "Request cancelled")
		return
	}
	httpError(w, http.StatusInternalServerError, err.Error())
}
