package providers

import (
	"cmp"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"
)

// Model is one model a provider offers, read from its own listing
// endpoint (`ask models`); fields a provider does not report are empty.
type Model struct {
	ID   string `json:"id"`   // the name to pass to --model
	Name string `json:"name"` // a display name, else the ID
	// ContextLength is the most tokens a request may hold (input, or input
	// and output where the provider reports one number).
	ContextLength   int   `json:"context_length,omitempty"`
	MaxOutputTokens int   `json:"max_output_tokens,omitempty"`
	Tools           *bool `json:"tools,omitempty"` // whether it calls tools, when the provider says
	// InputPrice and OutputPrice are US dollars per million tokens, as
	// decimal text, when the provider lists prices.
	InputPrice  string `json:"input_price,omitempty"`
	OutputPrice string `json:"output_price,omitempty"`
	Created     string `json:"created,omitempty"` // RFC 3339
	OwnedBy     string `json:"owned_by,omitempty"`
	Size        int64  `json:"size,omitempty"` // bytes on disk, for a local model
}

// ModelLister is a protocol whose provider lists its models.
type ModelLister interface {
	// ModelsURL is the listing's URL; page is "" for the first page, else
	// what ParseModels returned as next.
	ModelsURL(baseURL, page string) string
	// ParseModels reads one page of the listing; next is "" on the last.
	ParseModels(body []byte) (models []Model, next string, err error)
}

// OpenAIModels is the model listing of an OpenAI-shaped API: GET /models,
// one page (ParseOpenAIModels). The Chat Completions and Responses
// protocols embed it.
type OpenAIModels struct{}

// ModelsURL implements ModelLister.
func (OpenAIModels) ModelsURL(baseURL, _ string) string {
	return strings.TrimRight(baseURL, "/") + "/models"
}

// ParseModels implements ModelLister.
func (OpenAIModels) ParseModels(body []byte) ([]Model, string, error) {
	models, err := ParseOpenAIModels(body)
	return models, "", err
}

// ParseOpenAIModels reads the OpenAI-shaped listing of GET /models,
// {"object":"list","data":[{"id","created","owned_by"}]}, which the Chat
// Completions family (DeepSeek, Moonshot, LM Studio) shares; OpenRouter's
// adds name, context_length, pricing (dollars per token) and
// supported_parameters, read where present. It has one page.
func ParseOpenAIModels(body []byte) ([]Model, error) {
	if !gjson.ValidBytes(body) {
		return nil, Malformed("the model listing is not JSON")
	}
	data := gjson.GetBytes(body, "data")
	if !data.IsArray() {
		return nil, Malformed("the model listing has no data array")
	}
	var out []Model
	for _, m := range data.Array() {
		id := m.Get("id").String()
		if id == "" {
			continue
		}
		model := Model{ID: id, Name: cmp.Or(m.Get("name").String(), id), OwnedBy: m.Get("owned_by").String(),
			ContextLength:   int(m.Get("context_length").Int()),
			MaxOutputTokens: int(m.Get("top_provider.max_completion_tokens").Int()),
			InputPrice:      perMillion(m.Get("pricing.prompt").String()),
			OutputPrice:     perMillion(m.Get("pricing.completion").String()),
		}
		if c := m.Get("created"); c.Type == gjson.Number && c.Int() > 0 {
			model.Created = time.Unix(c.Int(), 0).UTC().Format(time.RFC3339)
		}
		if params := m.Get("supported_parameters"); params.IsArray() {
			tools := false
			for _, p := range params.Array() {
				tools = tools || p.String() == "tools"
			}
			model.Tools = &tools
		}
		out = append(out, model)
	}
	return out, nil
}

// perMillion turns a price per token, as decimal text, into one per
// million tokens, exactly; a price that is not a number, or negative (a
// router's "-1": it varies), gives "".
func perMillion(perToken string) string {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(perToken))
	if !ok || r.Sign() < 0 {
		return ""
	}
	r.Mul(r, big.NewRat(1_000_000, 1))
	s := r.FloatString(6)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// ModelsPageSize is how many models a paginated listing is asked for at
// once: the most Anthropic's and Gemini's take.
const ModelsPageSize = 1000

// PagedModelsURL is baseURL's /models listing asking for ModelsPageSize
// models in the query parameter sizeParam and, past the first, for page
// in pageParam: the listings differ only in those names.
func PagedModelsURL(baseURL, sizeParam, pageParam, page string) string {
	u := strings.TrimRight(baseURL, "/") + "/models?" + sizeParam + "=" + strconv.Itoa(ModelsPageSize)
	if page != "" {
		u += "&" + pageParam + "=" + url.QueryEscape(page)
	}
	return u
}

// MaxModelPages bounds a paginated listing, so that a server that always
// says there is more cannot keep ask asking.
const MaxModelPages = 50

// ErrTooManyPages is a listing longer than MaxModelPages.
var ErrTooManyPages = fmt.Errorf("%w: the model listing goes on past %d pages", ErrMalformed, MaxModelPages)

// WindowReader is a protocol whose provider tells a model's input window
// (catalog.Provider.ListsWindow says which providers do).
type WindowReader interface {
	// WindowRequest is the request that asks: its method, URL and body
	// (nil for none).
	WindowRequest(baseURL, model string) (method, url string, body []byte)
	// ParseWindow reads the model's window in tokens from the answer; 0
	// when it names none.
	ParseWindow(body []byte, model string) (int, error)
}

// WindowRequest implements WindowReader: the model listing.
func (m OpenAIModels) WindowRequest(baseURL, _ string) (string, string, []byte) {
	return http.MethodGet, m.ModelsURL(baseURL, ""), nil
}

// ParseWindow implements WindowReader: the listed model's context_length
// (OpenRouter's).
func (OpenAIModels) ParseWindow(body []byte, model string) (int, error) {
	models, err := ParseOpenAIModels(body)
	if err != nil {
		return 0, err
	}
	for _, m := range models {
		if m.ID == model {
			return max(m.ContextLength, 0), nil
		}
	}
	return 0, nil
}
