package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// Names of the tools that reach servers' resources.
const (
	ListResourcesTool = "list_mcp_resources"
	ReadResourceTool  = "read_mcp_resource"
)

// Resource is a resource a server offers.
type Resource struct {
	Server, URI, Name, MIMEType, Description string
}

// Resources lists the resources of the servers that offer them, or of one
// server when server is not empty.
func (s *Servers) Resources(ctx context.Context, server string) ([]Resource, error) {
	var out []Resource
	for _, srv := range s.servers {
		if !srv.resources || server != "" && srv.name != server {
			continue
		}
		start := len(out)
		err := listAll(ctx, srv, "resources", func(ctx context.Context, sess *sdk.ClientSession, cursor string) (string, error) {
			res, err := sess.ListResources(ctx, &sdk.ListResourcesParams{Cursor: cursor})
			if err != nil {
				return "", err
			}
			for _, r := range res.Resources {
				out = append(out, Resource{Server: srv.name, URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description})
			}
			return pageEnd(res.NextCursor, len(res.Resources), &out, start), nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// listAll pages through one of a server's lists: page lists from cursor
// and returns the next cursor, "" at the end. At most 100 pages are read.
func listAll(ctx context.Context, srv *server, what string, page func(context.Context, *sdk.ClientSession, string) (string, error)) error {
	sess, err := srv.session(ctx)
	if err != nil {
		return err
	}
	cursor := ""
	for range 100 {
		cursor, err = callWithin(ctx, srv, func(ctx context.Context) (string, error) { return page(ctx, sess, cursor) })
		if err != nil {
			return fmt.Errorf("MCP server %q: listing %s: %w", srv.name, what, err)
		}
		if cursor == "" {
			return nil
		}
	}
	return nil
}

// maxListed bounds the resources or prompts listed from one server.
const maxListed = 500

// pageEnd is the cursor of the next page, given the page's n items and
// the list so far, whose items from start on are this server's: none
// after an empty page (which a server that keeps returning a cursor would
// otherwise loop on), and none once the server has maxListed, cut to that.
func pageEnd[T any](next string, n int, out *[]T, start int) string {
	if len(*out)-start >= maxListed {
		*out = (*out)[:start+maxListed]
		return ""
	}
	if n == 0 {
		return ""
	}
	return next
}

// ReadResource reads a resource: its text, and the images among its
// contents.
func (s *Servers) ReadResource(ctx context.Context, server, uri string) (tool.Result, error) {
	srv, ok := s.server(server)
	if !ok || srv.startErr != nil {
		return tool.Result{}, fmt.Errorf("%w: no MCP server %q is running", ErrUnavailable, server)
	}
	sess, err := srv.session(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	res, err := callWithin(ctx, srv, func(ctx context.Context) (*sdk.ReadResourceResult, error) {
		return sess.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	})
	if err != nil {
		return tool.Result{}, fmt.Errorf("MCP server %q: reading %s: %w", server, uri, err)
	}
	var c converter
	for _, r := range res.Contents {
		c.content(&sdk.EmbeddedResource{Resource: r})
	}
	if c.text.Len() == 0 {
		c.add("(empty)")
	}
	return tool.Result{Text: c.text.String(), Parts: c.parts}, nil
}

// Prompt is a prompt template a server offers.
type Prompt struct {
	Server, Name, Description string
	Arguments                 []PromptArgument
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name, Description string
	Required          bool
}

// Prompts lists the prompts of the servers that offer them.
func (s *Servers) Prompts(ctx context.Context) ([]Prompt, error) {
	var out []Prompt
	for _, srv := range s.servers {
		if !srv.prompts {
			continue
		}
		start := len(out)
		err := listAll(ctx, srv, "prompts", func(ctx context.Context, sess *sdk.ClientSession, cursor string) (string, error) {
			res, err := sess.ListPrompts(ctx, &sdk.ListPromptsParams{Cursor: cursor})
			if err != nil {
				return "", err
			}
			for _, p := range res.Prompts {
				pr := Prompt{Server: srv.name, Name: p.Name, Description: p.Description}
				for _, a := range p.Arguments {
					pr.Arguments = append(pr.Arguments, PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
				}
				out = append(out, pr)
			}
			return pageEnd(res.NextCursor, len(res.Prompts), &out, start), nil
		})
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// GetPrompt fills in a server's prompt and returns its messages.
func (s *Servers) GetPrompt(ctx context.Context, server, name string, args map[string]string) ([]llm.Message, error) {
	srv, ok := s.server(server)
	if !ok || srv.startErr != nil {
		return nil, fmt.Errorf("%w: no MCP server %q is running", ErrUnavailable, server)
	}
	sess, err := srv.session(ctx)
	if err != nil {
		return nil, err
	}
	res, err := callWithin(ctx, srv, func(ctx context.Context) (*sdk.GetPromptResult, error) {
		return sess.GetPrompt(ctx, &sdk.GetPromptParams{Name: name, Arguments: args})
	})
	if err != nil {
		return nil, fmt.Errorf("MCP server %q: prompt %s: %w", server, name, err)
	}
	var out []llm.Message
	for _, m := range res.Messages {
		var c converter
		c.content(m.Content)
		msg := llm.Message{Role: llm.RoleUser, Parts: append([]llm.Part{llm.Text(c.text.String())}, c.parts...)}
		if m.Role == "assistant" {
			msg.Role = llm.RoleAssistant
		}
		out = append(out, msg)
	}
	return out, nil
}

// callWithin calls f with the server's call timeout.
func callWithin[T any](ctx context.Context, srv *server, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, srv.callTimeout())
	defer cancel()
	return f(ctx)
}

// resourceTools lets the model list and read the resources of the servers
// that offer them.
func resourceTools(s *Servers) []tool.Tool {
	var names []string
	for _, srv := range s.servers {
		if srv.resources {
			names = append(names, srv.name)
		}
	}
	list := tool.Must(tool.New(ListResourcesTool,
		"Lists the resources (documents, data) that MCP servers offer: their URIs, names and types. Servers with resources: "+strings.Join(names, ", ")+". Read one with "+ReadResourceTool+".",
		func(ctx context.Context, in struct {
			Server string `json:"server,omitempty" jsonschema:"only this server's resources"`
		}) (string, error) {
			rs, err := s.Resources(ctx, in.Server)
			if err != nil && len(rs) == 0 {
				return "", fmt.Errorf("Error: %w", err)
			}
			var b strings.Builder
			for _, r := range rs {
				fmt.Fprintf(&b, "%s: %s %s%s\n", r.Server, r.URI, r.Name, describe(r.Description, r.MIMEType))
			}
			if err != nil {
				fmt.Fprintf(&b, "(listing stopped: %v)\n", err)
			}
			if b.Len() == 0 {
				return "No resources.", nil
			}
			return b.String(), nil
		}, tool.WithTraits(resourceTraits)))
	return []tool.Tool{list, newReadResourceTool(s)}
}

// resourceTraits are the resource tools': they only read what the servers
// offer.
var resourceTraits = tool.Traits{ReadOnly: true}

// readResourceTool reads a resource, images included.
type readResourceTool struct {
	s *Servers
	v *tool.Validator
}

type readResourceArgs struct {
	Server string `json:"server" jsonschema:"the server that offers the resource"`
	URI    string `json:"uri" jsonschema:"the resource's URI, as list_mcp_resources shows it"`
}

func newReadResourceTool(s *Servers) tool.Tool {
	schema, err := jsonschema.For[readResourceArgs](nil)
	if err != nil {
		panic(err) // a fixed type: cannot fail
	}
	v, err := tool.NewValidator(ReadResourceTool, schema)
	if err != nil {
		panic(err)
	}
	return &readResourceTool{s: s, v: v}
}

// Traits implements tool.Traited.
func (t *readResourceTool) Traits() tool.Traits { return resourceTraits }

func (t *readResourceTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: ReadResourceTool, Description: "Reads a resource an MCP server offers, by server and URI.", Parameters: t.v.Schema()}
}

func (t *readResourceTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return textOf(t.CallResult(ctx, args))
}

func (t *readResourceTool) CallResult(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	var in readResourceArgs
	if err := t.v.Decode(args, &in); err != nil {
		return tool.Result{}, err
	}
	r, err := t.s.ReadResource(ctx, in.Server, in.URI)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Result{Text: "Error: " + err.Error(), IsError: true}, nil
	}
	return r, nil
}
