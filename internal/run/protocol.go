package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/command"
	"github.com/ask-cli/ask/internal/providers/textproto"
)

// TextForm is the text tool protocol a stage works in under a
// --tool-protocol choice, meaning what it means for a run: json and
// markdown name a form; auto is json for a provider without native tool
// calling and native otherwise. "" means native.
func TextForm(choice string, prov catalog.Provider) (textproto.Form, error) {
	switch {
	case choice == ToolProtocolJSON:
		return textproto.JSON, nil
	case choice == ToolProtocolMarkdown:
		return textproto.Markdown, nil
	case choice != "" && choice != ToolProtocolAuto && choice != ToolProtocolNative:
		return "", fault.Usagef("--tool-protocol %q: choose auto, native, json or markdown", choice)
	case prov.NativeTools:
		return "", nil
	case choice == ToolProtocolNative:
		return "", fault.Usagef("--tool-protocol native: %s has no native tool calling; use json or markdown", prov.Name)
	}
	return textproto.JSON, nil
}

// ProtocolForm is Protocol with the text tool protocol the settings
// speak ("" for native calls), from --tool-protocol as a run resolves it.
func (s Settings) ProtocolForm() (catalog.Provider, providers.Protocol, textproto.Form, error) {
	prov, proto, err := s.Protocol()
	if err != nil {
		return prov, nil, "", err
	}
	form, err := TextForm(s.ToolProtocol.Value, prov)
	return prov, proto, form, err
}

// useToolProtocol puts the tool protocol choice in place for an HTTP
// provider:
//
//   - native: the provider's own tool calling;
//   - json, markdown: the text tool protocol (DESIGN §5), over any provider;
//   - auto: native where the provider has it, json otherwise; and when the
//     provider answers that the model "does not support tools", the run
//     switches to json once, with a note.
func (r *Run) useToolProtocol(caller *providers.Caller) error {
	if r.Settings.Command.Value != "" && r.Settings.Command.Source == "flag --command" {
		return fault.Usagef("--command runs a local model with --provider command; %s is reached over HTTP", r.Provider.Name)
	}
	choice := r.Settings.ToolProtocol.Value
	if choice == ToolProtocolAuto && r.Provider.NativeTools && len(r.Declared) > 0 {
		caller.Fallback = r.textOnRefusal(caller)
		return nil
	}
	form, err := TextForm(choice, r.Provider)
	if err != nil || form == "" {
		return err
	}
	caller.Protocol = textproto.Wrap(caller.Protocol, form, r.Declared)
	return nil
}

// useLocalProgram makes a local program the run's model. It always speaks
// the text tool protocol.
func (r *Run) useLocalProgram(proto providers.Protocol) error {
	form := textproto.JSON
	switch r.Settings.ToolProtocol.Value {
	case ToolProtocolNative:
		return fault.Usagef("--tool-protocol native: a command model has no native tool calling; use json or markdown")
	case ToolProtocolMarkdown:
		form = textproto.Markdown
	}
	proto = textproto.Wrap(proto, form, r.Declared)
	r.BaseURL, r.Stream = "", false
	if rp := r.env.Replay; rp != nil {
		r.model = rp.localProgram(proto, r.BaseURL)
		return nil
	}
	line := strings.TrimSpace(r.Settings.Command.Value)
	if line == "" && !r.env.Offline {
		return fault.Usagef("--provider %s needs the model to run: --command 'ollama run qwen3' (or $ASK_COMMAND)", r.Provider.Name)
	}
	// The user chose this program, as they would a shell alias, and tools
	// like `llm` need their own keys: it gets ask's whole environment, and
	// $ASK_MODEL when a model is named, so that --command can use it.
	var env []string
	if r.env.Environ != nil {
		env = r.env.Environ()
	}
	if len(env) == 0 {
		env = os.Environ()
	}
	if r.ModelName != "" {
		env = append(env, "ASK_MODEL="+r.ModelName)
	}
	r.model = localProgram{&command.Model{Command: line, Protocol: proto, Model: r.ModelName, Dir: r.workdir, Env: env}}
	if r.ModelName == "" {
		r.ModelName = line
	}
	return nil
}

// localProgram gives a local model program's failures their kinds: a
// program that cannot be found is a bad --command, one that fails is the
// provider failing.
type localProgram struct{ m *command.Model }

func (lp localProgram) CurrentProtocol() providers.Protocol { return lp.m.CurrentProtocol() }

func (lp localProgram) Call(ctx context.Context, req providers.Request, h providers.Hooks) (*providers.Turn, error) {
	turn, err := lp.m.Call(ctx, req, h)
	switch {
	case errors.Is(err, command.ErrNotFound):
		return nil, asKind(Usage, fmt.Errorf("%w; check --command", err))
	case errors.Is(err, command.ErrFailed):
		return nil, asKind(Provider, err)
	}
	return turn, err
}

// note tells a person something on the way, clearing the status line
// first when there is one.
func (r *Run) note(format string, args ...any) {
	if r.env.Notes != nil {
		fmt.Fprintf(r.env.Notes, "ask: "+format+"\n", args...)
	}
}

// textOnRefusal is the caller's fallback under --tool-protocol auto: when
// the provider refuses tools for the model, the run goes on in the JSON
// text protocol, with a note. The caller's protocol is the run's one
// protocol: the loop asks the model for it, so it follows the switch.
func (r *Run) textOnRefusal(caller *providers.Caller) func(error) providers.Protocol {
	return func(err error) providers.Protocol {
		if !rejectsTools(err) {
			return nil
		}
		r.note("%s: the model does not support tools; switching to --tool-protocol json", r.Provider.Name)
		return textproto.Wrap(caller.Protocol, textproto.JSON, r.Declared)
	}
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
