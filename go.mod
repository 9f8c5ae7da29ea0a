module github.com/deepagents-go/deepagents

go 1.26.0

require (
	github.com/bmatcuk/doublestar/v4 v4.10.4
	golang.org/x/sys v0.49.0
)
