package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxIDLen bounds a thread's, run's or assistant's ID, in bytes: a longer
// one is refused (400) before it reaches the database.
const maxIDLen = 256

// idProblem says why id cannot be a thread's (run's, assistant's) ID,
// "" when it can. IDs need not be UUIDs (the CLI's threads are named by
// their users), but each must survive a trip through a URL path as the
// SDKs build one: "." and ".." are path steps a client resolves away
// (runs.wait("..") would post to /runs/wait and run threadless), a "/",
// "\", "?", "#" or "%" changes what path a client sends (the SDK 1.0.3
// does not escape IDs), and control characters are no name.
func idProblem(id string) string {
	switch {
	case id == "":
		return "it is empty"
	case len(id) > maxIDLen:
		return fmt.Sprintf("it is longer than %d bytes", maxIDLen)
	case id == "." || id == "..":
		return fmt.Sprintf("%q is a path step", id)
	case !utf8.ValidString(id):
		return "it is not UTF-8"
	}
	if i := strings.IndexAny(id, `/\?#%`); i >= 0 {
		return fmt.Sprintf("it contains %q", id[i])
	}
	if strings.ContainsFunc(id, unicode.IsControl) {
		return "it contains a control character"
	}
	return ""
}

// badID answers 400 when id cannot be a kind's ID ("thread", "run",
// "assistant"), and reports whether it did.
func badID(w http.ResponseWriter, kind, id string) bool {
	p := idProblem(id)
	if p == "" {
		return false
	}
	httpError(w, http.StatusBadRequest, fmt.Sprintf("Invalid %s ID: %s", kind, p))
	return true
}

// checkIDs refuses (400) a request whose path names a thread, run or
// assistant by an ID no thread, run or assistant can have, before it is
// routed: such an ID is never found, and one over maxIDLen would reach
// the database. The path's segments are read as sent, so an escaped "/"
// (a%2Fb) is one segment, and refused.
func checkIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seg := strings.Split(strings.TrimPrefix(r.URL.EscapedPath(), "/"), "/")
		id := func(i int) (string, bool) {
			if i >= len(seg) {
				return "", false
			}
			s, err := url.PathUnescape(seg[i])
			if err != nil {
				s = seg[i]
			}
			return s, true
		}
		switch seg[0] {
		case "threads":
			if tid, ok := id(1); ok && !(len(seg) == 2 && (tid == "search" || tid == "")) {
				if badID(w, "thread", tid) {
					return
				}
				if len(seg) >= 4 && seg[2] == "runs" {
					if rid, _ := id(3); rid != "" && rid != "stream" && rid != "wait" && rid != "crons" && badID(w, "run", rid) {
						return
					}
				}
			}
		case "a2a":
			if aid, ok := id(1); ok && badID(w, "assistant", aid) {
				return
			}
		case "assistants":
			if aid, ok := id(1); ok && !(len(seg) == 2 && (aid == "search" || aid == "")) && badID(w, "assistant", aid) {
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}
