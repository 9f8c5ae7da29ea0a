package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/deepagents-go/deepagents"
	"github.com/deepagents-go/deepagents/checkpoint"
	"github.com/deepagents-go/deepagents/llm/replay"
	"github.com/deepagents-go/deepagents/server"
)

// Serve a deep agent over the LangGraph API and run it as a client would.
func Example() {
	saver := checkpoint.NewMemorySaver()
	a, err := deepagents.New(deepagents.Config{Model: replay.New(replay.Turn{Content: "Hello!"}), Checkpointer: saver})
	if err != nil {
		panic(err)
	}
	s, err := server.New(server.Config{Assistants: []server.Assistant{{GraphID: "deepagent", Agent: a}}, Saver: saver})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	hs := httptest.NewServer(s) // or http.ListenAndServe("127.0.0.1:2024", s)
	defer hs.Close()

	res, err := http.Post(hs.URL+"/runs/wait", "application/json",
		strings.NewReader(`{"assistant_id": "deepagent", "input": {"messages": [{"type": "human", "content": "Hi"}]}}`))
	if err != nil {
		panic(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var values struct {
		Messages []struct {
			Type    string `json:"type"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &values)
	for _, m := range values.Messages {
		fmt.Println(m.Type, m.Content)
	}
	// Output:
	// human Hi
	// ai Hello!
}
