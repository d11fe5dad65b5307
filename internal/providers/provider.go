// Package providers holds the contract every model provider implements and the
// plumbing they share: the standardized tool formats of DESIGN §2, SSE and
// NDJSON framing, API error decoding and the HTTP caller.
//
// A protocol package (openai, responses, anthropic, gemini, ollama) is a set of
// pure translations between the standardized formats and one wire protocol. It
// never does I/O; Caller does that for all of them.
package providers

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/tidwall/gjson"
)

// Protocol is one wire protocol. All methods are pure functions over bytes.
type Protocol interface {
	// Name is the protocol's short name, such as "openai" or "anthropic".
	Name() string

	// FormatTools turns standardized tools into the value of the request's
	// tools field. An empty list gives nil.
	FormatTools(tools []Tool) (json.RawMessage, error)

	// ParseToolCalls reads the standardized calls from a response body or a
	// whole recorded stream.
	ParseToolCalls(body []byte) ([]ToolCall, error)

	// FormatToolResults turns the results of one step into the history
	// messages (or items) the protocol expects after the assistant message.
	FormatToolResults(results []ToolResult) ([]json.RawMessage, error)

	// UserMessage is a user turn holding text and the files given with
	// it (-a), in the protocol's own form. Callers check first that the
	// provider takes them (catalog.Provider.CheckAttachment); a protocol
	// that cannot carry one refuses it.
	UserMessage(text string, attachments ...Attachment) (json.RawMessage, error)

	// BuildRequest renders the request body for one step.
	BuildRequest(r Request) ([]byte, error)

	// HistoryField names the request body's top-level array that holds the
	// conversation in the protocol's own form ("messages", "input",
	// "contents"): the array AppendHistory extends.
	HistoryField() string

	// ParseResponse reads a non-streamed response body into a Turn.
	ParseResponse(body []byte) (*Turn, error)

	// NewStream returns an accumulator for one streamed response.
	NewStream() Stream

	// Framing tells how the protocol frames a streamed response.
	Framing() Framing

	// Endpoint is the URL to POST a request to.
	Endpoint(baseURL, model string, stream bool) string

	// Authorize sets the credential headers (and any fixed headers the
	// protocol requires) on an outgoing request. key may be empty.
	Authorize(h http.Header, key string)
}

// Stream accumulates the events of one streamed response.
type Stream interface {
	// Add consumes one event. It returns text to show the user as it
	// arrives, and an *APIError when the event reports an error.
	Add(ev Event) (delta string, err error)

	// Done reports whether the stream reached its terminal event; events
	// after that are not read.
	Done() bool

	// Turn returns what the stream said. It fails when the stream ended
	// before the protocol's terminal event.
	Turn() (*Turn, error)
}

// Framing is how a protocol frames a streamed response.
type Framing int

const (
	SSE    Framing = iota // text/event-stream
	NDJSON                // one JSON object a line
)

// Event is one framed stream event. For NDJSON, Name is empty and Data is
// one line.
type Event struct {
	Name string
	Data []byte
}

// Request is what the loop asks a protocol to render for one step. What a
// run sets once (temperature, reasoning, the schema, caching) is as much a
// field of it as the conversation: each protocol reads every field it has
// a place for, and no wrapper around a protocol adds them.
type Request struct {
	Model    string
	System   string
	Messages []json.RawMessage // history in the protocol's own form
	Tools    []Tool
	Stream   bool
	// MaxTokens caps the reply; 0 leaves the provider's default (protocols
	// that require a value, like Anthropic's, choose one).
	MaxTokens int
	// Schema, when set, asks for a final answer matching this JSON Schema.
	Schema json.RawMessage
	// Temperature, when not nil, is the sampling temperature.
	Temperature *float64
	// Reasoning is how hard a reasoning model should think: "" leaves the
	// model's default, else one of ReasoningLevels. Each protocol sends it
	// as its own field (effort, thinking budget, thinking level).
	Reasoning string
	// Tier is the provider's service tier: "" for its standard one, else
	// one of Tiers. A protocol that has tiers sends it as its own field
	// (OpenAI's service_tier, the Responses API's background mode); one
	// that has none refuses any other value with ErrKnob.
	Tier string
	// Cache asks the provider to cache the request's stable prefix
	// (DESIGN §3, Cost); the zero value asks for nothing.
	Cache Cache
	// NoToolCalls withholds the tools on this request (the last step a
	// limit allows), so that the model answers: tool_choice none where the
	// protocol has it (OpenAI's, Anthropic's), Gemini's function-calling
	// mode NONE, and no tools at all where there is no such field
	// (Ollama). Where the tools stay declared, the history's calls still
	// name tools the request knows.
	NoToolCalls bool
	// ContextWindow is the model's input window in tokens when the run
	// knows it, 0 otherwise: a protocol whose server would cut a longer
	// prompt silently sends it (Ollama's options.num_ctx).
	ContextWindow int
	// Checked is how many of Messages, from the first, were in a request
	// the same protocol built before: BuildRequest checks only the rest.
	// The loop sets it, so that a step checks the messages it added, not
	// the whole conversation again; 0 checks them all.
	Checked int
}

// BadMessage is the index of the first message BuildRequest must check
// (from Checked on) that ok refuses, or -1 when there is none: each
// protocol says what a message of its own must be.
func (r Request) BadMessage(ok func([]byte) bool) int {
	for i := min(max(r.Checked, 0), len(r.Messages)); i < len(r.Messages); i++ {
		if !ok(r.Messages[i]) {
			return i
		}
	}
	return -1
}

// Cache is how a request asks for its prefix to be cached.
type Cache struct {
	// Mark puts cache breakpoints (cache_control) on the stable prefix:
	// the tools, the system prompt and the conversation so far. Anthropic,
	// and OpenRouter for some models, cache only what a request marks.
	Mark bool
	// Key names the conversation, so that a provider that routes requests
	// to its caches by a key (OpenAI's prompt_cache_key) keeps every step
	// of it on one; "" sends none.
	Key string
}

// ReasoningLevels are the values of --reasoning.
var ReasoningLevels = []string{"low", "medium", "high"}

// The values of --tier (Request.Tier).
const (
	// TierFlex is OpenAI's flex processing: slower, at the Batch API's
	// prices, and now and then a 429 when it has no room.
	TierFlex = "flex"
	// TierBackground is the Responses API's background mode: the request
	// is queued and its response read again until it is done.
	TierBackground = "background"
)

// Tiers are the values of --tier.
var Tiers = []string{TierFlex, TierBackground}

// Poller is a protocol whose replies may come back unfinished, to be read
// again until they are (the Responses API's background mode).
type Poller interface {
	// Pending reads a reply body: when it is not done yet, pending is true
	// with the URLs (under baseURL) that read it again and cancel it.
	Pending(baseURL string, body []byte) (poll, cancel string, pending bool)
}

// ErrKnob marks a request a protocol cannot render because of its
// temperature or reasoning settings (a model without thinking, thinking
// with a temperature the provider forbids with it): the user's choice to
// change, found before anything is sent.
var ErrKnob = errors.New("unsupported setting")

// Turn is one reply of the model.
type Turn struct {
	Text      string
	Reasoning string // shown to the user only; the protocol's own copy travels in Messages
	Calls     []ToolCall
	// Messages is the reply as history items in the protocol's own form,
	// echoed byte for byte on the next request (thinking blocks,
	// signatures, reasoning items and generated call ids included).
	Messages   []json.RawMessage
	Usage      Usage
	StopReason string

	// Invalid is set by the text tool protocol when the reply looked like a
	// tool call but could not be parsed; the loop answers it with this text.
	Invalid string
	// Terminate is set by the text tool protocol when the model marked its
	// calls as its last action: the loop runs them and then finishes.
	Terminate bool
}

// Usage counts the tokens of one request, or of several added together.
//
// InputTokens is every token of the prompt, whatever the provider charged
// for it: the cache-read and cache-write tokens are parts of it, never
// added on top. Providers differ here (Anthropic's input_tokens leaves the
// cached ones out; OpenAI's prompt_tokens, Gemini's promptTokenCount and
// Responses' input_tokens hold them), and each protocol package adds them
// up to this one meaning.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// CacheReadTokens of the input were read from the provider's prompt
	// cache, at its cached rate.
	CacheReadTokens int `json:"cache_read_tokens"`
	// CacheWriteTokens of the input were written to the cache, which some
	// providers charge above the base rate (Anthropic: 1.25×).
	CacheWriteTokens int `json:"cache_write_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	TotalTokens      int `json:"total_tokens"`
	// Cost is what the provider says the request cost, in its billing
	// currency (OpenRouter: credits, in US dollars); nil when it says
	// nothing.
	Cost *float64 `json:"cost,omitempty"`
}

// Add returns the sum of two usages. The cost is known when either side's
// is.
func (u Usage) Add(o Usage) Usage {
	sum := Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
	}
	if u.Cost != nil || o.Cost != nil {
		c := costOf(u) + costOf(o)
		sum.Cost = &c
	}
	return sum
}

func costOf(u Usage) float64 {
	if u.Cost == nil {
		return 0
	}
	return *u.Cost
}

// ReportedCost reads a provider's own cost figure (OpenRouter's
// usage.cost): a number, or nil when there is none.
func ReportedCost(v gjson.Result) *float64 {
	if v.Type != gjson.Number {
		return nil
	}
	c := v.Float()
	return &c
}
