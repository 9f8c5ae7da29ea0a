package sqlite

import "github.com/deepagents-go/deepagents/internal/sqlcore"

// dialect is SQLite's SQL for the operations the sqlite and postgres
// packages share (internal/sqlcore).
var dialect = sqlcore.Dialect{
	Name:    "sqlite",
	Params:  "?",
	JSONIn:  "%s", // the JSON's bytes, in a BLOB
	JSONOut: "%s",
	NoLimit: -1,
	Wrap:    wrap,
}
