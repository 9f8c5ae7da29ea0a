package a2aserve

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/deepagents-go/deepagents/server"
)

// What the A2A routes share with the LangGraph API's: its IDs, its
// bounds, its answers, and its records' encoding in the store.

var (
	idProblem = server.IDProblem
	newUUID   = server.NewUUID
	writeJSON = server.WriteJSON
	httpError = server.HTTPError
)

const maxBody = server.MaxBody

// badID answers 400 when id cannot be a kind's ID, and reports whether it
// did.
func badID(w http.ResponseWriter, kind, id string) bool {
	p := idProblem(id)
	if p == "" {
		return false
	}
	httpError(w, http.StatusBadRequest, fmt.Sprintf("Invalid %s ID: %s", kind, p))
	return true
}

// asValue is v's JSON object, as a store item's value holds it. v is one
// of A2A's own records, which encode.
func asValue(v any) map[string]any {
	b, _ := json.Marshal(v) //nolint:errchkjson // our own records
	var m map[string]any
	json.Unmarshal(b, &m) //nolint:errcheck // our own encoding
	return m
}

// fromValue decodes a store item's value into v; its error is the
// decoding's (a field of the wrong type), v's other fields decoded.
func fromValue(value map[string]any, v any) error {
	b, err := json.Marshal(value)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
