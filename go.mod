module github.com/deepagents-go/deepagents

go 1.26.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/google/jsonschema-go v0.4.3
	go.uber.org/goleak v1.3.0
)
