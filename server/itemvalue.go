package server

import "encoding/json"

// The server keeps its records (runs, crons, assistants, A2A tasks) as
// store items, whose values are JSON objects: a record goes in as its
// JSON, and comes out decoded from it.

// asValue is v's JSON object, as a store item's value holds it. v is one
// of the server's own records, which encode.
func asValue(v any) map[string]any {
	b, _ := json.Marshal(v) //nolint:errchkjson // the server's own records
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
