package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deepagents-go/deepagents/internal/clip"
	"github.com/deepagents-go/deepagents/llm"
	"github.com/deepagents-go/deepagents/tool"
)

// Bounds on what a server may put before the model.
const (
	// maxDescription bounds a tool's description: it is sent on every step.
	maxDescription = 2048
	// maxSchema bounds a tool's input schema, in bytes; a larger one
	// leaves the tool out.
	maxSchema = 64 << 10
	// maxText bounds the text of one result.
	maxText = 1 << 20
	// maxImages and maxImageBytes bound the images of one result.
	maxImages     = 8
	maxImageBytes = 5 << 20
	// maxName is the longest tool name providers accept.
	maxName = 64
)

// mcpTool is a tool of an MCP server, as the agent sees it.
type mcpTool struct {
	srv    *server
	remote string // the name the server knows it by
	spec   llm.ToolSpec
	traits tool.Traits
}

var (
	_ tool.Tool         = (*mcpTool)(nil)
	_ tool.ResultCaller = (*mcpTool)(nil)
	_ tool.Traited      = (*mcpTool)(nil)
)

// traitsOf reads a tool's annotations, which are the server's hints: its
// readOnlyHint makes the tool read-only (plan mode offers it; a workspace
// checkpoint is not taken after it), and its openWorldHint, true when
// absent as the protocol says, marks it as reaching other hosts. A server
// the user configured is trusted as far as its tools are.
func traitsOf(a *sdk.ToolAnnotations) tool.Traits {
	if a == nil {
		return tool.Traits{Network: true}
	}
	return tool.Traits{ReadOnly: a.ReadOnlyHint, Network: a.OpenWorldHint == nil || *a.OpenWorldHint}
}

// newTool adapts one of a server's tools.
func newTool(s *server, t *sdk.Tool) (*mcpTool, error) {
	if t == nil || t.Name == "" {
		return nil, errors.New("a tool without a name")
	}
	schema, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, err
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if len(desc) > maxDescription {
		desc = clip.Prefix(desc, maxDescription-3) + "..."
	}
	return &mcpTool{srv: s, remote: t.Name, spec: llm.ToolSpec{Name: ToolName(s.name, t.Name), Description: desc, Parameters: schema},
		traits: traitsOf(t.Annotations)}, nil
}

// ToolName is the name the model sees for a server's tool:
// mcp__server__tool, with characters providers refuse replaced by _ and,
// past 64 characters, cut and ended with a hash of the whole.
func ToolName(server, name string) string {
	full := tool.MCPPrefix + server + "__" + name
	b := []byte(full)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if len(b) <= maxName {
		return string(b)
	}
	h := fnv.New32a()
	h.Write([]byte(full))
	return fmt.Sprintf("%s_%08x", b[:maxName-9], h.Sum32())
}

// exact reports whether the model sees the tool under its server's name
// for it, unchanged.
func (t *mcpTool) exact() bool {
	return t.spec.Name == tool.MCPPrefix+t.srv.name+"__"+t.remote
}

// withHash is name, cut to leave room, ended with a hash of remote: a
// tool's name when its own is taken.
func withHash(name, remote string) string {
	h := fnv.New32a()
	h.Write([]byte(remote))
	return fmt.Sprintf("%s_%08x", name[:min(len(name), maxName-9)], h.Sum32())
}

// inputSchema is a tool's input schema as the model gets it: the server's,
// as it is, with "type": "object" added when missing (providers require
// it).
func inputSchema(s any) (json.RawMessage, error) {
	if s == nil {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	if len(data) > maxSchema {
		return nil, fmt.Errorf("input schema of %d bytes; the limit is %d", len(data), maxSchema)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("input schema is not a JSON object")
	}
	if t, ok := obj["type"]; ok && string(t) != `"object"` {
		return nil, fmt.Errorf("input schema of type %s; tools take objects", t)
	}
	if _, ok := obj["type"]; !ok {
		obj["type"] = json.RawMessage(`"object"`)
		return json.Marshal(obj)
	}
	return data, nil
}

func (t *mcpTool) Spec() llm.ToolSpec { return t.spec }

// Traits implements tool.Traited.
func (t *mcpTool) Traits() tool.Traits { return t.traits }

// Call implements tool.Tool for callers that take text only.
func (t *mcpTool) Call(ctx context.Context, args json.RawMessage) (string, error) {
	return textOf(t.CallResult(ctx, args))
}

// textOf is a result as tool.Tool's Call returns it: its text (images are
// described there, not shown), or an error for an error result.
func textOf(r tool.Result, err error) (string, error) {
	if err != nil {
		return "", err
	}
	if r.IsError {
		return "", errors.New(r.Text)
	}
	return r.Text, nil
}

// CallResult calls the tool on its server. What goes wrong on the server's
// side (an error result, a crash, no answer in time) is an error result;
// only the run's own end is returned as an error.
func (t *mcpTool) CallResult(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	fail := func(format string, a ...any) (tool.Result, error) {
		return tool.Result{Text: "Error: " + fmt.Sprintf(format, a...), IsError: true}, nil
	}
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage(`{}`)
	}
	if args[0] != '{' || !json.Valid(args) {
		return fail("the arguments of %s must be a JSON object", t.spec.Name)
	}
	srv := t.srv
	sess, err := srv.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return fail("MCP server %q is not available: %v", srv.name, err)
	}
	timeout := srv.callTimeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: t.remote, Arguments: args})
	timedOut := cctx.Err() != nil
	cancel()
	switch {
	case err == nil:
		return convertResult(res), nil
	case ctx.Err() != nil:
		return tool.Result{}, ctx.Err()
	case timedOut:
		if !alive(ctx, sess) {
			srv.drop(sess)
			return fail("MCP server %q did not answer %s within %s and no longer answers at all; it is started again on the next call", srv.name, t.remote, timeout)
		}
		return fail("MCP server %q did not answer %s within %s; the call was cancelled", srv.name, t.remote, timeout)
	case answered(err):
		return fail("MCP server %q: %s: %v", srv.name, t.remote, err)
	}
	// The connection failed: the server exited, or wrote what is not the
	// protocol. The session cannot be trusted any more.
	srv.drop(sess)
	return fail("MCP server %q stopped during the call of %s: %v; it is started again on the next call", srv.name, t.remote, withStderr(err, srv.stderr.Load()))
}

// answered reports whether err is the server's answer (a JSON-RPC error
// such as an unknown tool or invalid parameters), not a failed connection.
func answered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

// convertResult turns a server's result into what the model sees: text,
// with images after it.
func convertResult(res *sdk.CallToolResult) tool.Result {
	var c converter
	for _, content := range res.Content {
		c.content(content)
	}
	if c.text.Len() == 0 && res.StructuredContent != nil {
		if data, err := json.Marshal(res.StructuredContent); err == nil {
			c.add(string(data))
		}
	}
	if c.text.Len() == 0 && len(c.parts) == 0 {
		c.add("(no output)")
	}
	return tool.Result{Text: c.text.String(), Parts: c.parts, IsError: res.IsError}
}

// converter gathers a result's text and images within their bounds.
type converter struct {
	text       strings.Builder
	parts      []llm.Part
	imageBytes int
	cut        bool
}

func (c *converter) add(s string) {
	if c.cut {
		return
	}
	if c.text.Len() > 0 {
		c.text.WriteByte('\n')
	}
	if room := maxText - c.text.Len(); len(s) > room {
		s, c.cut = clip.Prefix(s, max(room, 0))+"\n... [output cut at 1 MiB]", true
	}
	c.text.WriteString(s)
}

func (c *converter) content(content sdk.Content) {
	switch v := content.(type) {
	case *sdk.TextContent:
		c.add(v.Text)
	case *sdk.ImageContent:
		c.image("image", v.MIMEType, v.Data)
	case *sdk.AudioContent:
		c.add(fmt.Sprintf("[audio of type %s, %d bytes, not shown: audio cannot be passed to the model]", v.MIMEType, len(v.Data)))
	case *sdk.ResourceLink:
		c.add(fmt.Sprintf("[resource %s: %s%s]", v.URI, v.Name, describe(v.Description, v.MIMEType)))
	case *sdk.EmbeddedResource:
		r := v.Resource
		switch {
		case r == nil:
		case r.Blob != nil:
			c.image("resource "+r.URI, r.MIMEType, r.Blob)
		default:
			c.add(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
		}
	}
}

// image adds an image the model can see, or says why it cannot.
func (c *converter) image(what, mime string, data []byte) {
	switch {
	case !imageType(mime):
		c.add(fmt.Sprintf("[%s of type %s, %d bytes, not shown]", what, mime, len(data)))
	case len(c.parts) == maxImages || c.imageBytes+len(data) > maxImageBytes:
		c.add(fmt.Sprintf("[%s of type %s, %d bytes, not shown: a result may hold at most %d images of %d MiB in all]", what, mime, len(data), maxImages, maxImageBytes>>20))
	default:
		c.imageBytes += len(data)
		c.parts = append(c.parts, llm.Part{Type: llm.PartImage, MIMEType: mime, Data: data})
		c.add(fmt.Sprintf("[%s %d: %s, %d bytes, attached]", what, len(c.parts), mime, len(data)))
	}
}

// imageType reports whether providers take images of this type.
func imageType(mime string) bool {
	switch mime {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return true
	}
	return false
}

func describe(desc, mime string) string {
	var parts []string
	if desc != "" {
		parts = append(parts, clip.Prefix(desc, 200))
	}
	if mime != "" {
		parts = append(parts, mime)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}
