package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/command"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// Values of --tool-protocol.
const (
	toolProtoAuto     = "auto"
	toolProtoNative   = "native"
	toolProtoJSON     = "json"
	toolProtoMarkdown = "markdown"
)

// useToolProtocol applies --tool-protocol and --command to a session built
// from flags: it chooses how the model calls tools and, for --provider
// command, puts the local program in place of the HTTP caller.
//
//   - native: the provider's own tool calling;
//   - json, markdown: the text tool protocol (DESIGN §5), over any provider;
//   - auto: native where the provider has it, json otherwise; and when the
//     provider answers that the model "does not support tools", the run
//     switches to json once, with a note on stderr.
func useToolProtocol(c *cli.Context, stdio *IO, s *session) error {
	choice, err := toolProtocolChoice(c)
	if err != nil {
		return err
	}
	prov, err := catalog.Lookup(s.provider)
	if err != nil {
		return withCode(exitUsage, err)
	}
	if prov.Protocol == "command" {
		return useCommand(c, stdio, s, choice)
	}
	if c.String("command") != "" {
		return usageErr("--command runs a local model with --provider command; %s is reached over HTTP", prov.Name)
	}
	return applyToolProtocol(stdio, s, prov, choice, c.Bool("quiet"))
}

// applyToolProtocol puts the tool protocol choice in place for an HTTP
// provider; replay calls it with the choice a transcript recorded.
func applyToolProtocol(stdio *IO, s *session, prov catalog.Provider, choice string, quiet bool) error {
	caller, ok := s.model.(*providers.Caller)
	if !ok {
		return fmt.Errorf("--tool-protocol: the session has no HTTP caller")
	}
	wrap := func(form textproto.Form) {
		caller.Protocol = textproto.Wrap(caller.Protocol, form, s.declared)
	}
	switch {
	case choice == toolProtoNative && !prov.NativeTools:
		return usageErr("--tool-protocol native: %s has no native tool calling; use json or markdown", prov.Name)
	case choice == toolProtoJSON, choice == toolProtoAuto && !prov.NativeTools:
		wrap(textproto.JSON)
	case choice == toolProtoMarkdown:
		wrap(textproto.Markdown)
	case choice == toolProtoAuto && len(s.declared) > 0:
		s.model = &toolFallback{caller: caller, tools: s.declared, provider: prov.Name,
			notes: stdio.Err, quiet: quiet, clearLine: stdio.ErrTTY}
	}
	return nil
}

// toolProtocolChoice is the value of --tool-protocol, checked.
func toolProtocolChoice(c *cli.Context) (string, error) {
	choice := firstNonEmpty(c.String("tool-protocol"), toolProtoAuto)
	switch choice {
	case toolProtoAuto, toolProtoNative, toolProtoJSON, toolProtoMarkdown:
		return choice, nil
	}
	return "", usageErr("--tool-protocol %q: choose auto, native, json or markdown", choice)
}

// stageTextForm is the text tool protocol a provider stage works in under
// --tool-protocol, meaning what it means for a run: json and markdown
// name a form; auto is json for a provider without native tool calling
// (the command provider) and native otherwise. "" means native.
func stageTextForm(c *cli.Context, prov catalog.Provider) (textproto.Form, error) {
	choice, err := toolProtocolChoice(c)
	if err != nil {
		return "", err
	}
	switch {
	case choice == toolProtoJSON:
		return textproto.JSON, nil
	case choice == toolProtoMarkdown:
		return textproto.Markdown, nil
	case prov.NativeTools:
		return "", nil
	case choice == toolProtoNative:
		return "", usageErr("--tool-protocol native: %s has no native tool calling; use json or markdown", prov.Name)
	}
	return textproto.JSON, nil
}

// useCommand makes a command model the session's model. It always speaks
// the text tool protocol.
func useCommand(c *cli.Context, stdio *IO, s *session, choice string) error {
	line := strings.TrimSpace(firstNonEmpty(c.String("command"), stdio.Getenv("ASK_COMMAND")))
	if line == "" {
		return usageErr("--provider command needs the model to run: --command 'ollama run qwen3' (or $ASK_COMMAND)")
	}
	if choice == toolProtoNative {
		return usageErr("--tool-protocol native: a command model has no native tool calling; use json or markdown")
	}
	form := textproto.JSON
	if choice == toolProtoMarkdown {
		form = textproto.Markdown
	}
	proto := textproto.Wrap(s.model.CurrentProtocol(), form, s.declared)
	model := firstNonEmpty(c.String("model"), stdio.Getenv("ASK_MODEL"))
	// The user chose this program, as they would a shell alias, and tools
	// like `llm` need their own keys: it gets ask's whole environment, and
	// $ASK_MODEL when a model is named, so that --command can use it.
	env := stdio.Environ()
	if len(env) == 0 {
		env = os.Environ()
	}
	if model != "" {
		env = append(env, "ASK_MODEL="+model)
	}
	s.model = commandModel{&command.Model{Command: line, Protocol: proto, Model: model, Dir: s.workdir, Env: env}}
	s.modelName = firstNonEmpty(model, line)
	s.baseURL = ""
	s.stream = false
	return nil
}

// commandModel gives a command model's failures their exit codes: a
// program that cannot be found is a bad --command (2), one that fails is a
// provider error (3).
type commandModel struct{ m *command.Model }

func (cm commandModel) CurrentProtocol() providers.Protocol { return cm.m.Protocol }

func (cm commandModel) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	turn, err := cm.m.Call(ctx, req, h)
	switch {
	case errors.Is(err, command.ErrNotFound):
		return nil, withCode(exitUsage, fmt.Errorf("%w; check --command", err))
	case errors.Is(err, command.ErrFailed):
		return nil, withCode(exitProvider, err)
	}
	return turn, err
}

// toolFallback switches a run to the JSON text protocol, once, when the
// provider refuses tools for the model. The switch is the caller's: the
// loop asks the model for its protocol and so renders the rest of the run
// in the new one.
type toolFallback struct {
	caller    *providers.Caller
	tools     []providers.Tool
	provider  string
	notes     io.Writer
	quiet     bool
	clearLine bool // stderr is a terminal with a status line on it
	switched  bool
}

func (f *toolFallback) CurrentProtocol() providers.Protocol { return f.caller.Protocol }

func (f *toolFallback) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	turn, err := f.caller.Call(ctx, req, h)
	if err == nil || f.switched || !rejectsTools(err) {
		return turn, err
	}
	f.switched = true
	f.caller.Protocol = textproto.Wrap(f.caller.Protocol, textproto.JSON, f.tools)
	if !f.quiet {
		prefix := "ask: "
		if f.clearLine {
			prefix = "\r\033[K" + prefix
		}
		fmt.Fprintf(f.notes, "%s%s: the model does not support tools; switching to --tool-protocol json\n", prefix, f.provider)
	}
	return f.caller.Call(ctx, req, h)
}

// rejectsTools recognises a provider refusing tools for a model. There is
// no error code for it, only the message: Ollama says "MODEL does not
// support tools" (HTTP 400, on /api/chat and /v1), OpenRouter "No endpoints
// found that support tool use" (HTTP 404).
func rejectsTools(err error) bool {
	var apiErr *providers.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode < 400 || apiErr.StatusCode >= 500 {
		return false
	}
	msg := strings.ToLower(apiErr.Message)
	return strings.Contains(msg, "does not support tools") || strings.Contains(msg, "support tool use")
}
