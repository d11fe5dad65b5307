package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// Protocol is the Gemini generateContent protocol.
type Protocol struct{}

var _ providers.Protocol = (*Protocol)(nil)

// New returns the Gemini generateContent protocol.
func New() *Protocol { return &Protocol{} }

// Name is "gemini".
func (*Protocol) Name() string { return "gemini" }

// Framing is SSE (alt=sse); the separators are CRLF, which ReadSSE accepts.
func (*Protocol) Framing() providers.Framing { return providers.SSE }

// HistoryField implements providers.Protocol.
func (*Protocol) HistoryField() string { return "contents" }

// Endpoint is base + "/models/MODEL:generateContent", or
// ":streamGenerateContent?alt=sse" for a stream. A model given with its
// collection ("models/x", "tunedModels/y") keeps it.
func (*Protocol) Endpoint(baseURL, model string, stream bool) string {
	if !strings.Contains(model, "/") {
		model = "models/" + model
	}
	segs := strings.Split(model, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	u := strings.TrimRight(baseURL, "/") + "/" + strings.Join(segs, "/")
	if stream {
		return u + ":streamGenerateContent?alt=sse"
	}
	return u + ":generateContent"
}

// Authorize sets x-goog-api-key when there is a key.
func (*Protocol) Authorize(h http.Header, key string) {
	if key != "" {
		h.Set("x-goog-api-key", key)
	}
}

// FormatTools renders [{"functionDeclarations":[{name, description?,
// parameters?}]}]. Parameters are cleaned to Gemini's schema subset; a tool
// that takes no arguments gets no parameters field.
func (*Protocol) FormatTools(tools []providers.Tool) (json.RawMessage, error) {
	if len(tools) == 0 {
		return nil, nil
	}
	decls := make([]json.RawMessage, len(tools))
	for i, t := range tools {
		if t.Name == "" {
			return nil, fmt.Errorf("gemini: tool %d: name is missing", i)
		}
		params, err := cleanParameters(t.ParamsOrEmpty())
		if err == nil && params != nil && !gjson.ValidBytes(params) {
			err = errors.New("not valid JSON")
		}
		if err != nil {
			return nil, fmt.Errorf("gemini: tool %q: parameters: %w", t.Name, err)
		}
		decls[i] = providers.Object(
			providers.Field{Key: "name", Value: providers.Quote(t.Name)},
			providers.Field{Key: "description", Value: providers.OptionalString(t.Description)},
			providers.Field{Key: "parameters", Value: params})
	}
	return providers.JoinArray([]json.RawMessage{providers.Object(providers.ArrayField("functionDeclarations", decls))}), nil
}

// cleanParameters cleans a tool's parameter schema. It returns nil for an
// object schema without properties: Gemini needs no parameters field for a
// function without arguments, and older API versions rejected an OBJECT
// with empty properties.
func cleanParameters(schema json.RawMessage) (json.RawMessage, error) {
	out, err := cleanSchema(schema)
	if err != nil {
		return nil, err
	}
	doc := gjson.ParseBytes(out)
	if !doc.Get("type").Exists() && doc.Get("properties").Exists() {
		if out, err = providers.SetRaw(out, "type", []byte(`"OBJECT"`)); err != nil {
			return nil, err
		}
		doc = gjson.ParseBytes(out)
	}
	empty := true
	doc.ForEach(func(k, v gjson.Result) bool {
		switch {
		case k.Str == "type" && v.Str == "OBJECT":
		case k.Str == "properties" && len(v.Map()) == 0:
		default:
			empty = false
		}
		return empty
	})
	if empty {
		return nil, nil
	}
	return out, nil
}

// UserMessage is {"role":"user","parts":[{"text":TEXT}]}, with an
// inlineData part before it for each file that goes with it (attach.go).
func (*Protocol) UserMessage(text string, attachments ...providers.Attachment) (json.RawMessage, error) {
	if len(attachments) > 0 {
		return withAttachments(text, attachments), nil
	}
	return providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("parts", []json.RawMessage{providers.Object(providers.Field{Key: "text", Value: providers.Quote(text)})})), nil
}

// FormatToolResults renders every result of one step as a functionResponse
// part of ONE user content. Each names its function (Gemini matches by name
// and order); the call's id is sent only when the model gave one.
func (*Protocol) FormatToolResults(results []providers.ToolResult) ([]json.RawMessage, error) {
	if len(results) == 0 {
		return nil, nil
	}
	parts := make([]json.RawMessage, len(results))
	for i, r := range results {
		if r.Name == "" {
			return nil, fmt.Errorf("gemini: tool result %d (id %q): name is missing; Gemini answers a call by its function name", i, r.ID)
		}
		var id json.RawMessage
		if r.ID != "" && !isGeneratedID(r.ID) {
			id = providers.Quote(r.ID)
		}
		parts[i] = providers.Object(providers.Field{Key: "functionResponse", Value: providers.Object(
			providers.Field{Key: "id", Value: id},
			providers.Field{Key: "name", Value: providers.Quote(r.Name)},
			providers.Field{Key: "response", Value: resultObject(r)})})
	}
	return []json.RawMessage{providers.Object(
		providers.Field{Key: "role", Value: json.RawMessage(`"user"`)},
		providers.ArrayField("parts", parts))}, nil
}

// resultObject is a functionResponse's response: {"output": X} or
// {"error": X}, the keys Gemini reads. X is the content as a string, or as
// JSON when the content is a JSON object or array.
func resultObject(r providers.ToolResult) json.RawMessage {
	key := `{"output":`
	if r.IsError {
		key = `{"error":`
	}
	value := providers.Quote(r.Content)
	if t := bytes.TrimSpace([]byte(r.Content)); len(t) > 0 && (t[0] == '{' || t[0] == '[') && json.Valid(t) {
		value = t
	}
	out := make([]byte, 0, len(key)+len(value)+1)
	out = append(out, key...)
	out = append(out, value...)
	return append(out, '}')
}

// BuildRequest renders {contents, systemInstruction?, tools?,
// generationConfig?}. The model and the stream choice travel in the URL.
func (p *Protocol) BuildRequest(r providers.Request) ([]byte, error) {
	system := r.System
	var responseSchema json.RawMessage
	if s := bytes.TrimSpace(r.Schema); len(s) > 0 {
		if !gjson.ValidBytes(s) || !gjson.ParseBytes(s).IsObject() {
			return nil, fmt.Errorf("gemini: schema is not a JSON object")
		}
		if len(r.Tools) > 0 {
			var compact bytes.Buffer
			if err := json.Compact(&compact, s); err != nil {
				return nil, fmt.Errorf("gemini: schema: %w", err)
			}
			if system != "" {
				system += "\n\n"
			}
			system += providers.SchemaInstruction + compact.String()
		} else {
			cleaned, err := cleanSchema(s)
			if err != nil {
				return nil, fmt.Errorf("gemini: schema: %w", err)
			}
			responseSchema = cleaned
		}
	}
	if i := r.BadMessage(gjson.ValidBytes); i >= 0 {
		return nil, fmt.Errorf("gemini: message %d is not valid JSON", i)
	}
	tools, err := p.FormatTools(r.Tools)
	if err != nil {
		return nil, err
	}

	var toolConfig, instr json.RawMessage
	if tools != nil && r.NoToolCalls {
		toolConfig = json.RawMessage(`{"functionCallingConfig":{"mode":"NONE"}}`)
	}
	if system != "" {
		instr = providers.Object(providers.ArrayField("parts", []json.RawMessage{
			providers.Object(providers.Field{Key: "text", Value: providers.Quote(system)}),
		}))
	}
	var thinking json.RawMessage
	if r.Reasoning != "" {
		if thinking, err = thinkingConfig(r.Model, r.Reasoning); err != nil {
			return nil, fmt.Errorf("gemini: build request: %w", err)
		}
	}
	var maxTokens, mimeType json.RawMessage
	if r.MaxTokens > 0 {
		maxTokens = providers.Int(r.MaxTokens)
	}
	if responseSchema != nil {
		mimeType = json.RawMessage(`"application/json"`)
	}
	// The body is written once, in order, so that the conversation (each
	// message validated above) is copied a single time however long it
	// grows.
	return providers.Object(
		providers.ArrayField("contents", alternate(r.Messages)),
		providers.Field{Key: "systemInstruction", Value: instr},
		providers.Field{Key: "tools", Value: tools},
		providers.Field{Key: "toolConfig", Value: toolConfig},
		providers.Field{Key: "generationConfig", Value: providers.OptionalObject(
			providers.Field{Key: "maxOutputTokens", Value: maxTokens},
			providers.Field{Key: "temperature", Value: providers.OptionalNumber(r.Temperature)},
			providers.Field{Key: "thinkingConfig", Value: thinking},
			providers.Field{Key: "responseMimeType", Value: mimeType},
			providers.Field{Key: "responseSchema", Value: responseSchema},
		)},
	), nil
}

// unansweredTurn stands between two user turns in a row, which Gemini
// refuses ("multiturn requests alternate between user and model"): a
// conversation continued (-c) after a run that stopped with its tool
// results unanswered, at a limit or by Ctrl-C, has them. A model turn is
// put between rather than the two merged, since Gemini reads text folded
// into a turn of function responses as part of them.
var unansweredTurn = json.RawMessage(`{"role":"model","parts":[{"text":"(no reply: the run stopped here)"}]}`)

// alternate returns msgs with unansweredTurn between any two user turns
// in a row; msgs itself when there are none, as there almost never are.
func alternate(msgs []json.RawMessage) []json.RawMessage {
	var out []json.RawMessage
	prevUser := false
	for i, m := range msgs {
		user := gjson.GetBytes(m, "role").String() == "user"
		if user && prevUser {
			if out == nil {
				out = append(make([]json.RawMessage, 0, len(msgs)+1), msgs[:i]...)
			}
			out = append(out, unansweredTurn)
		}
		if out != nil {
			out = append(out, m)
		}
		prevUser = user
	}
	if out == nil {
		return msgs
	}
	return out
}

// ParseToolCalls reads the calls of a response body, a JSON array of chunks
// or a whole recorded SSE stream.
func (p *Protocol) ParseToolCalls(body []byte) ([]providers.ToolCall, error) {
	turn, err := providers.ParseBody(p, body)
	if err != nil {
		return nil, err
	}
	return turn.Calls, nil
}

// NewStream returns an accumulator for one streamed response.
func (*Protocol) NewStream() providers.Stream { return newStream() }

// ThinkingBudgets are the thinkingBudget tokens of a Gemini 2.5 model for
// each Request.Reasoning, within the range of every 2.5 model (Flash-Lite
// takes 512 to 24576, Flash 0 to 24576, Pro 128 to 32768).
var ThinkingBudgets = map[string]int{"low": 1024, "medium": 8192, "high": 24576}

// thinkingConfig is generationConfig.thinkingConfig for a reasoning level:
// a token budget for Gemini 2.5, a thinkingLevel for Gemini 3 and later
// (3 Pro takes only low and high). Models before 2.5 do not think.
func thinkingConfig(model, level string) (json.RawMessage, error) {
	budget, ok := ThinkingBudgets[level]
	if !ok {
		return nil, fmt.Errorf("gemini: reasoning %q: %w", level, providers.ErrKnob)
	}
	m := strings.TrimPrefix(strings.ToLower(model), "models/")
	switch {
	case strings.HasPrefix(m, "gemini-2.5"):
		return json.RawMessage(`{"thinkingBudget":` + strconv.Itoa(budget) + `}`), nil
	case strings.HasPrefix(m, "gemini-1") || strings.HasPrefix(m, "gemini-2.0") || strings.HasPrefix(m, "gemma"):
		return nil, fmt.Errorf("gemini: %s has no thinking to configure (Gemini 2.5 and later do): %w", model, providers.ErrKnob)
	case level == "medium" && strings.HasPrefix(m, "gemini-3-pro"):
		return nil, fmt.Errorf("gemini: %s takes a thinking level of low or high, not medium: %w", model, providers.ErrKnob)
	}
	// The enum's names, as Google's own SDKs send them: LOW, MEDIUM, HIGH.
	return json.RawMessage(`{"thinkingLevel":` + string(providers.Quote(strings.ToUpper(level))) + `}`), nil
}
