package anthropic_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm/anthropic"
	"github.com/deepagents-go/deepagents/llm/internal/providertest"
)

// The shared helpers, under the short names the tests use.
var (
	newRawServer = providertest.NewRawServer
	fixture      = providertest.Fixture
	serveSSE     = providertest.ServeSSE
	collect      = providertest.Collect
	done         = providertest.Done
	noDone       = providertest.NoDone
	userReq      = providertest.UserReq
	field        = providertest.Field
	decode       = providertest.Decode
	compact      = providertest.Compact
	oneLine      = providertest.OneLine
)

func newModel(t *testing.T, baseURL string, opts anthropic.Options) *anthropic.Model {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = "test-key"
	}
	opts.BaseURL = baseURL
	m, err := anthropic.New("claude-sonnet-4-5", opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
