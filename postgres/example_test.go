package postgres_test

import (
	"context"
	"fmt"

	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/postgres"
)

// Open a schema of a PostgreSQL database and list its threads. (Not run:
// it needs a server.)
func ExampleOpen() {
	ctx := context.Background()
	db, err := postgres.Open(ctx, "postgres://postgres@127.0.0.1:5432/app?sslmode=disable",
		&postgres.Options{Schema: "agents"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	threads, err := db.Saver().Threads(ctx, checkpoint.ListOptions{Limit: 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, th := range threads {
		fmt.Println(th.ID, th.Status, th.Head)
	}
	_ = db.Store().Put(ctx, []string{"memories", "ada"}, "prefs", map[string]any{"tone": "brief"})
}
