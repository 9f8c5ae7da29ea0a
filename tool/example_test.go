package tool_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/deepagents-go/deepagents/tool"
)

// A typed tool: the schema comes from the input struct, and arguments are
// validated before the function runs.
func ExampleNew() {
	type weatherIn struct {
		City string `json:"city" jsonschema:"the city to report on"`
		Days int    `json:"days,omitempty" jsonschema:"how many days ahead"`
	}
	weather := tool.Must(tool.New("weather", "Report the weather.", func(_ context.Context, in weatherIn) (string, error) {
		return fmt.Sprintf("Sunny in %s for %d day(s).", in.City, max(in.Days, 1)), nil
	}))

	out, _ := weather.Call(context.Background(), json.RawMessage(`{"city":"Lisbon","days":2}`))
	fmt.Println(out)
	_, err := weather.Call(context.Background(), json.RawMessage(`{"days":"two"}`))
	fmt.Println(err)
	// Output:
	// Sunny in Lisbon for 2 day(s).
	// Error: invalid arguments for tool "weather": field "city": missing required field
}
