package openai_test

import (
	"testing"

	"github.com/deepagents-go/deepagents/llm/internal/providertest"
	"github.com/deepagents-go/deepagents/llm/openai"
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

func newModel(t *testing.T, baseURL string, opts openai.Options) *openai.Model {
	t.Helper()
	if opts.APIKey == "" {
		opts.APIKey = "test-key"
	}
	opts.BaseURL = baseURL
	m, err := openai.New("gpt-4.1", opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
