package tool_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/deepagents-go/deepagents/tool"
)

// TestSetReportsEveryFailure: a Set keeps the tools built, in order, and
// reports each one that failed.
func TestSetReportsEveryFailure(t *testing.T) {
	fn := func(context.Context, struct{}) (string, error) { return "", nil }
	var s tool.Set
	s.Add(tool.New("a", "first", fn))
	s.Add(nil, errors.New("b failed"))
	s.Add(tool.New("c", "third", fn))
	s.Add(nil, errors.New("d failed"))
	tools, err := s.Tools()
	if len(tools) != 2 || tools[0].Spec().Name != "a" || tools[1].Spec().Name != "c" {
		t.Errorf("tools = %v", tools)
	}
	if err == nil || !strings.Contains(err.Error(), "b failed") || !strings.Contains(err.Error(), "d failed") {
		t.Errorf("err = %v, want both failures", err)
	}
	var ok tool.Set
	ok.Add(tool.New("a", "first", fn))
	if _, err := ok.Tools(); err != nil {
		t.Errorf("no failure, but %v", err)
	}
}
