module github.com/deepagents-go/deepagents

go 1.26.0
