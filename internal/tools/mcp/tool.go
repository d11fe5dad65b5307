package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/ask-cli/ask/internal/mcpauth"
	"github.com/ask-cli/ask/internal/tools"
)

// remoteTool is one tool of a server, as ask declares it.
type remoteTool struct {
	sl     *slot
	remote string // the tool's name on the server
	info   tools.Info
}

// newRemoteTool describes a server's tool for the model and the policy.
//
// Risk: ask cannot confine what a server does, so a tool is exec (and needs
// approval) unless its annotations say readOnlyHint; then it is read, is
// offered in ask and plan modes and under --safe, and runs without asking.
// The hint is the server's word: the user chose to start that server. A
// remote server's tools reach the network, so without the network
// (noNetwork) they are exec whatever the hint says.
func newRemoteTool(srv *slot, name string, t *sdk.Tool, noNetwork bool) *remoteTool {
	params, note := cleanSchema(t.InputSchema)
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	if desc == "" && t.Annotations != nil {
		desc = t.Annotations.Title
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, srv.name)
	}
	if note != "" {
		desc += fmt.Sprintf(" (Its parameters are not declared: %s.)", note)
	}
	risk, approval := tools.Exec, true
	if t.Annotations != nil && t.Annotations.ReadOnlyHint && !(noNetwork && srv.remote != "") {
		risk, approval = tools.Read, false
	}
	return &remoteTool{sl: srv, remote: t.Name, info: tools.Info{
		Name: name, Description: desc, Parameters: params, Risk: risk, RequiresApproval: approval,
		Sandboxed: srv.sandboxed,
	}}
}

func (t *remoteTool) Info() tools.Info { return t.info }

// Run calls the tool. A result with isError and a failed call both become
// an error result; the text says which server and tool.
func (t *remoteTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	srv, err := t.sl.wait(ctx)
	if err != nil {
		return "", fmt.Errorf("%s: %v", t.info.Name, err)
	}
	if err := t.checkLate(); err != nil {
		return "", err
	}
	res, err := srv.session.CallTool(ctx, &sdk.CallToolParams{Meta: traceMeta(ctx), Name: t.remote, Arguments: args})
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("%s: the call was cancelled (%v)", t.info.Name, context.Cause(ctx))
		}
		var login *mcpauth.LoginNeeded
		if errors.As(err, &login) {
			// The server wants more than the kept sign-in: the person is
			// told the command that signs in again, the model that the
			// call failed for it.
			srv.warnOnce(login)
			return "", fmt.Errorf("%s: %v", t.info.Name, login)
		}
		if srv.remote != "" {
			// Gone, restarted (its session lost) or unreachable, whether
			// the SDK has closed the session yet or not: the run goes on,
			// and the model learns the server is not there.
			return "", fmt.Errorf("%s: the MCP server %s at %s cannot be reached: %v", t.info.Name, srv.name, srv.remote, oneLine(err))
		}
		if errors.Is(err, sdk.ErrConnectionClosed) {
			return "", fmt.Errorf("%s: the MCP server %s has stopped%s", t.info.Name, srv.name, srv.stderrNote())
		}
		return "", fmt.Errorf("%s: the MCP server %s could not run %s: %v", t.info.Name, srv.name, t.remote, err)
	}
	text, isError := renderResult(res)
	if isError {
		return "", errors.New(text)
	}
	return text, nil
}

// checkLate checks a tool declared from the cache against the list its
// server gave once up: the run keeps its declared tools, but a tool the
// server no longer has is not called, and one it no longer marks
// read-only is not run without the approval it would now need.
func (t *remoteTool) checkLate() error {
	if !t.sl.late {
		return nil
	}
	real, ok := t.sl.listed[t.remote]
	if !ok {
		return fmt.Errorf("%s: the MCP server %s no longer has the tool %s (its list changed since it was cached; the next run offers the new list)", t.info.Name, t.sl.name, t.remote)
	}
	readOnly := real.Annotations != nil && real.Annotations.ReadOnlyHint
	if t.info.Risk == tools.Read && !readOnly {
		return fmt.Errorf("%s: the MCP server %s no longer marks %s read-only, so it is not run without approval; the next run asks for it", t.info.Name, t.sl.name, t.remote)
	}
	return nil
}

// oneLine keeps an error to its first line.
func oneLine(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// RemoteName is the tool's name on its server.
func (t *remoteTool) RemoteName() string { return t.remote }

// traceMeta is the W3C trace context of ctx as MCP carries it, in the
// request's _meta (traceparent, tracestate), so that a traced server's
// spans join the run's trace; nil when ctx carries no span.
func traceMeta(ctx context.Context) sdk.Meta {
	carrier := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, carrier)
	if len(carrier) == 0 {
		return nil
	}
	meta := sdk.Meta{}
	for k, v := range carrier {
		meta[k] = v
	}
	return meta
}
