package agent_test

import (
	"io"
	"log/slog"
)

type slogLogger = slog.Logger

func newDiscardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
