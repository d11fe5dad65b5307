// Package responses speaks OpenAI's Responses API (POST {base}/responses) in
// its stateless mode: every request carries the whole history in "input",
// with "store": false, so nothing depends on what the server kept.
//
// What a turn echoes back (Turn.Messages) follows from that mode:
//
//   - function_call items are echoed as {type, call_id, name, arguments},
//     without their "fc_" item id: the server never stored it, the recorded
//     working follow-ups leave it out, and results are matched by call_id.
//   - reasoning items are echoed only when they carry encrypted_content (the
//     request asks for it with include, see wantsEncryptedReasoning), as
//     {type, id, encrypted_content, summary} exactly as received, and always
//     right before the item that followed them. A reasoning item without
//     encrypted_content names an id the server did not store, so replaying it
//     fails ("Item with id 'rs_…' not found"); it is dropped. A reasoning item
//     whose following item is dropped, or that ends the reply, is dropped too:
//     the API refuses a reasoning item "provided without its required
//     following item".
//   - assistant message items are echoed as an EasyInputMessage,
//     {"type":"message","role":"assistant","content":"<text>"} plus the
//     item's "phase" when it has one. The id-less output_text form some
//     clients send is not valid against the OpenAPI file (OutputMessage
//     requires id and status), and replaying the "msg_" id is exactly what
//     store:false forbids, so the text travels as a plain string.
//   - other item types are not echoed.
//
// Tool calls are decided by the presence of function_call items, never by
// the response status, which stays "completed".
package responses

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// Protocol is the Responses API. The zero value is ready to use.
type Protocol struct {
	providers.OpenAIModels // GET /models
}

var (
	_ providers.Protocol    = (*Protocol)(nil)
	_ providers.ModelLister = (*Protocol)(nil)
)

// New returns the Responses API protocol.
func New() *Protocol { return &Protocol{} }

// Name is "responses".
func (*Protocol) Name() string { return "responses" }

// Framing is SSE; the JSON "type" of each event says what it is.
func (*Protocol) Framing() providers.Framing { return providers.SSE }

// HistoryField implements providers.Protocol.
func (*Protocol) HistoryField() string { return "input" }

// Endpoint is {base}/responses; the model travels in the body.
func (*Protocol) Endpoint(baseURL, _ string, _ bool) string {
	return strings.TrimRight(baseURL, "/") + "/responses"
}

// Pending reports a response still queued or in progress (background
// mode), with where to read it again (GET /responses/{id}) and to cancel
// it (POST /responses/{id}/cancel). A response in any other status
// (completed, failed, cancelled, incomplete) is done.
func (*Protocol) Pending(baseURL string, body []byte) (poll, cancel string, pending bool) {
	resp := gjson.ParseBytes(body)
	id := resp.Get("id").String()
	switch resp.Get("status").String() {
	case "queued", "in_progress":
	default:
		return "", "", false
	}
	if id == "" {
		return "", "", false // nothing to read again: ParseResponse says what is wrong
	}
	poll = strings.TrimRight(baseURL, "/") + "/responses/" + url.PathEscape(id)
	return poll, poll + "/cancel", true
}

// Authorize sends the key as a bearer token.
func (*Protocol) Authorize(h http.Header, key string) {
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// minOutputTokens is the smallest max_output_tokens the API accepts
// (CreateResponse: minimum 16).
const minOutputTokens = 16

// FormatTools renders flat function tools:
//
//	{"type":"function","name","description","parameters","strict":false}
//
// strict is always sent: when it is omitted the API switches strict mode on
// for any schema it can (the recorded llm responses echo "strict": true for
// tools sent without it), and strict mode rewrites optional properties into
// required ones. Tools from the registry or MCP servers are arbitrary JSON
// Schema, so they go out non-strict.
func (*Protocol) FormatTools(tools []providers.Tool) (json.RawMessage, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	items := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("tool %d: name is missing", i)
		}
		params := t.ParamsOrEmpty()
		if !gjson.ValidBytes(params) || !gjson.ParseBytes(params).IsObject() {
			return nil, fmt.Errorf("tool %q: parameters are not a JSON object", t.Name)
		}
		items[i] = providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"function"`)},
			providers.Field{Key: "name", Value: providers.Quote(t.Name)},
			providers.Field{Key: "description", Value: providers.OptionalString(t.Description)},
			providers.Field{Key: "parameters", Value: params},
			providers.Field{Key: "strict", Value: providers.Bool(false)})
	}
	return providers.JoinArray(items), nil
}

// UserMessage is an EasyInputMessage: {"role":"user","content":text}, or
// content parts when files go with it (attach.go).
func (*Protocol) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	if len(attachments) > 0 {
		return withAttachments(text, attachments), nil
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.Field{Key: "content", Value: providers.Quote(text)}), nil
}

// FormatToolResults renders one function_call_output item per result, keyed
// by the call's call_id. A failed call's output starts with "Error: " (unless
// the tool already said so), because the item has no error flag of its own.
func (*Protocol) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(results))
	for i, r := range results {
		if r.ID == "" {
			return nil, fmt.Errorf("tool result %d (%s): call id is missing", i, r.Name)
		}
		content := r.Content
		if r.IsError && !strings.HasPrefix(strings.ToLower(content), "error") {
			content = "Error: " + content
		}
		out[i] = providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"function_call_output"`)},
			providers.Field{Key: "call_id", Value: providers.Quote(r.ID)},
			providers.Field{Key: "output", Value: providers.Quote(content)})
	}
	return out, nil
}

// BuildRequest renders one stateless request:
//
//	{"model","instructions"?,"input":[…],"tools"?,"store":false,
//	 "include"?,"stream"?,"max_output_tokens"?,"text"?}
//
// The system prompt goes in "instructions", which the API places before the
// input. "include": ["reasoning.encrypted_content"] is sent only for models
// that reason (see wantsEncryptedReasoning); others reject it with 400
// "Encrypted content is not supported with this model". A MaxTokens below the
// API's minimum of 16 is raised to 16 rather than sent to fail.
func (p *Protocol) BuildRequest(r providers.Request) ([]byte, error) {
	isObject := func(m []byte) bool { return gjson.ValidBytes(m) && gjson.ParseBytes(m).IsObject() }
	if i := r.BadMessage(isObject); i >= 0 {
		return nil, fmt.Errorf("input item %d is not a JSON object", i)
	}
	tools, err := p.FormatTools(r.Tools)
	if err != nil {
		return nil, err
	}
	if r.Reasoning != "" && !slices.Contains(providers.ReasoningLevels, r.Reasoning) {
		return nil, fmt.Errorf("responses: reasoning %q: %w", r.Reasoning, providers.ErrKnob)
	}
	if len(r.Schema) > 0 && (!gjson.ValidBytes(r.Schema) || !gjson.ParseBytes(r.Schema).IsObject()) {
		return nil, fmt.Errorf("answer schema is not a JSON object")
	}

	fields := []providers.Field{
		{Key: "model", Value: providers.Quote(r.Model)},
		{Key: "instructions", Value: providers.OptionalString(r.System)},
		providers.ArrayField("input", r.Messages),
		{Key: "tools", Value: tools},
	}
	if tools != nil && r.NoToolCalls {
		fields = append(fields, providers.Field{Key: "tool_choice", Value: json.RawMessage(`"none"`)})
	}
	var tier []providers.Field
	store := false
	switch r.Tier {
	case "":
	case providers.TierFlex:
		tier = append(tier, providers.Field{Key: "service_tier", Value: providers.Quote(r.Tier)})
	case providers.TierBackground:
		// A background response is kept while it runs, to be read again:
		// the API takes background only with store.
		store = true
		tier = append(tier, providers.Field{Key: "background", Value: providers.Bool(true)})
	default:
		return nil, fmt.Errorf("responses: tier %q: %w", r.Tier, providers.ErrKnob)
	}
	fields = append(fields, tier...)
	fields = append(fields,
		providers.Field{Key: "store", Value: providers.Bool(store)},
		// Keeps the steps of one conversation on the same prompt cache.
		providers.Field{Key: "prompt_cache_key", Value: providers.OptionalString(r.Cache.Key)})
	if wantsEncryptedReasoning(r.Model) {
		fields = append(fields, providers.Field{Key: "include", Value: json.RawMessage(`["reasoning.encrypted_content"]`)})
	}
	if r.Stream {
		fields = append(fields, providers.Field{Key: "stream", Value: providers.Bool(true)})
	}
	if r.MaxTokens > 0 {
		fields = append(fields, providers.Field{Key: "max_output_tokens", Value: providers.Int(max(r.MaxTokens, minOutputTokens))})
	}
	fields = append(fields,
		providers.Field{Key: "temperature", Value: providers.OptionalNumber(r.Temperature)},
		providers.Field{Key: "reasoning", Value: providers.OptionalObject(providers.Field{Key: "effort", Value: providers.OptionalString(r.Reasoning)})})
	if len(r.Schema) > 0 {
		fields = append(fields, providers.Field{Key: "text", Value: providers.Object(providers.Field{Key: "format", Value: providers.Object(
			providers.Field{Key: "type", Value: json.RawMessage(`"json_schema"`)},
			providers.Field{Key: "name", Value: json.RawMessage(`"answer"`)},
			providers.Field{Key: "strict", Value: providers.Bool(false)},
			providers.Field{Key: "schema", Value: r.Schema},
		)})})
	}
	return providers.Object(fields...), nil
}

// wantsEncryptedReasoning reports whether a model reasons, so that a
// stateless request should ask for encrypted reasoning to echo next turn.
// It knows OpenAI's reasoning families by name: the o-series (o1, o3,
// o4-mini, …), gpt-5 and later (except the "-chat" variants, which do not
// reason and reject the include) and codex models. A router's vendor prefix
// ("openai/gpt-5") is ignored. Unknown models get no include: a 400 for an
// unsupported include is worse than reasoning that is not carried over.
func wantsEncryptedReasoning(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	switch {
	case strings.Contains(m, "chat"):
		return false
	case len(m) >= 2 && m[0] == 'o' && m[1] >= '1' && m[1] <= '9':
		return true
	case strings.HasPrefix(m, "codex"):
		return true
	case strings.HasPrefix(m, "gpt-"):
		major := m[len("gpt-"):]
		end := strings.IndexFunc(major, func(r rune) bool { return r < '0' || r > '9' })
		if end >= 0 {
			major = major[:end]
		}
		n, err := strconv.Atoi(major)
		return err == nil && n >= 5
	}
	return false
}

// ParseToolCalls reads the calls of a response body or a recorded stream.
func (p *Protocol) ParseToolCalls(body []byte) ([]providers.ToolCall, error) {
	t, err := providers.ParseBody(p, body)
	if err != nil {
		return nil, err
	}
	return t.Calls, nil
}

// setString sets a JSON string without HTML escaping, so text round-trips
// byte for byte.
func setString(doc []byte, path, s string) ([]byte, error) {
	return providers.SetRaw(doc, path, providers.Quote(s))
}
