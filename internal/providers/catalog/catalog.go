// Package catalog names the providers ask can talk to: each is a wire
// protocol plus a configuration (base URL, key variable, default model,
// extra headers). OpenRouter, OpenAI, DeepSeek, Moonshot and LM Studio share
// the Chat Completions protocol and differ only here.
package catalog

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
)

// Provider is one configured provider.
type Provider struct {
	Name     string
	Protocol string // openai, responses, anthropic, gemini, ollama, command
	// New builds the wire protocol the provider speaks, in the dialect
	// the row's own fields say (Reasoning, NativeSchema).
	New     func(Provider) providers.Protocol
	BaseURL string
	// BaseURLEnv are the provider's own base-URL variables, consulted after
	// --base-url and ASK_BASE_URL.
	BaseURLEnv []string
	// KeyEnv are the variables holding the key, first set wins. Empty for
	// local servers that need none.
	KeyEnv []string
	// KeyOptional: a key is sent when one is set (a hosted Ollama), but
	// the provider answers without one.
	KeyOptional  bool
	DefaultModel string
	Header       http.Header

	// What the provider can do. The run and the CLI read these instead of
	// naming providers: adding a provider is its protocol package and one
	// row in rows.go.

	// NativeTools: the protocol has tool calling of its own; otherwise the
	// text tool protocol carries the calls.
	NativeTools bool
	// Streaming: the provider answers a request as a stream when asked.
	Streaming bool
	// NativeSchema: the request can ask for an answer matching a JSON
	// Schema (structured output). Without it the schema goes into the
	// system prompt and never into the request (the row's protocol is
	// built to leave it out): DeepSeek answers a response_format of type
	// json_schema with HTTP 400.
	NativeSchema bool
	// StreamsByDefault: a request body that does not say whether to stream
	// is answered with a stream (Ollama's /api/chat).
	StreamsByDefault bool
	// ListsWindow: the provider tells each model's input window
	// (providers.WindowReader: OpenRouter's listing, Ollama's /api/show),
	// which a run reads when --context-window does not give it.
	ListsWindow bool
	// StreamInURL: the endpoint, not the body, asks for a stream (Gemini),
	// so only a flag can say which a body wants.
	StreamInURL bool
	// LocalProgram: the model is a program run on this machine once per
	// step (--command), reached by no URL and needing no key.
	LocalProgram bool
	// MaxTemperature is the top of the temperature range the provider
	// takes (from 0); 0 means it takes no temperature, and --temperature
	// is a usage error.
	MaxTemperature float64
	// Reasoning names the request field --reasoning becomes; "" means the
	// provider has none, and --reasoning is a usage error. Chat Completions
	// servers differ: ReasoningEffort for most, ReasoningObject for
	// OpenRouter. The other protocols have one field each.
	Reasoning string
	// Tiers are the service tiers --tier may choose (providers.Tiers);
	// none makes --tier a usage error.
	Tiers []string
	// TierPriceRates are what a tier costs as a share of the listed
	// price, where the provider documents one (OpenAI's flex: the Batch
	// API's half); a tier not named costs the listed price.
	TierPriceRates map[string]float64
	// Attach is what -a/--attach may send the provider, and how much; nil
	// takes nothing.
	Attach *AttachLimits
	// CacheMarks are the prefixes of the model names whose provider
	// caches a prompt only where the request marks it (cache_control):
	// requests to them mark their stable prefix. "" covers every model.
	CacheMarks []string
	// CacheKey: the provider routes requests to its prompt caches by a
	// prompt_cache_key, which names the conversation.
	CacheKey bool
	// PublicModels: the model listing needs no key (OpenRouter's), so
	// `ask models` works before one is set.
	PublicModels bool
	// ReportsCost: every response says what it cost (OpenRouter's
	// usage.cost), so --max-budget-usd needs no prices.
	ReportsCost bool
	// Default: the provider chosen when nothing names one and no key
	// variable is set (DESIGN §3: Ollama on localhost). One row has it.
	Default bool
}

// MarksCache reports whether requests to model mark their prefix for
// caching.
func (p Provider) MarksCache(model string) bool {
	for _, prefix := range p.CacheMarks {
		if strings.HasPrefix(model, prefix) {
			return true
		}
	}
	return false
}

// Values of Provider.Reasoning.
const (
	ReasoningEffort = "reasoning_effort" // Chat Completions
	ReasoningObject = "reasoning.effort" // OpenRouter, Responses
	Thinking        = "thinking"         // Anthropic extended thinking
	ThinkingConfig  = "generationConfig.thinkingConfig"
	Think           = "think" // Ollama
)

// AttachLimits are the files a provider takes in a user message, checked
// before anything is sent. Sizes are of the file, before base64 (which
// adds a third on the wire).
type AttachLimits struct {
	PDF      bool  // PDFs as well as images (PNG, JPEG, WebP, GIF)
	MaxImage int64 // bytes of one image
	MaxPDF   int64 // bytes of one PDF
	MaxTotal int64 // bytes of all the files of a run
}

// SendStreams tells whether a request body asks for a streamed answer:
// its "stream" field where it has one, else the provider's default, else
// (for a provider whose URL says it) not noStream.
func (p Provider) SendStreams(body []byte, noStream bool) bool {
	if v := gjson.GetBytes(body, "stream"); v.IsBool() {
		return v.Bool()
	}
	switch {
	case p.StreamsByDefault:
		return true
	case p.StreamInURL:
		return !noStream
	}
	return false
}

// CheckAttachment says why the provider cannot take a, given the bytes
// of the files before it (total); nil when it can.
func (p Provider) CheckAttachment(a providers.Attachment, total int64) error {
	l := p.Attach
	switch {
	case l == nil:
		return fmt.Errorf("%s takes no attachments", p.Name)
	case !a.IsImage() && !l.PDF:
		return fmt.Errorf("%s takes images only, and %s is a %s", p.Name, a.Name, a.Kind())
	case a.IsImage() && int64(len(a.Data)) > l.MaxImage:
		return fmt.Errorf("%s is %s, and %s takes images of up to %s", a.Name, Size(int64(len(a.Data))), p.Name, Size(l.MaxImage))
	case !a.IsImage() && int64(len(a.Data)) > l.MaxPDF:
		return fmt.Errorf("%s is %s, and %s takes PDFs of up to %s", a.Name, Size(int64(len(a.Data))), p.Name, Size(l.MaxPDF))
	case total+int64(len(a.Data)) > l.MaxTotal:
		return fmt.Errorf("the attachments come to more than %s, the most %s takes in one request", Size(l.MaxTotal), p.Name)
	}
	return nil
}

// Size is a byte count for a person: "5 MiB", "812 KiB", "90 bytes".
func Size(n int64) string {
	switch {
	case n >= mib:
		return strings.TrimSuffix(strconv.FormatFloat(float64(n)/mib, 'f', 1, 64), ".0") + " MiB"
	case n >= 1<<10:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// NeedsKey reports whether the provider refuses requests without a key.
func (p Provider) NeedsKey() bool { return len(p.KeyEnv) > 0 && !p.KeyOptional }

// All lists the providers in the order auto-selection tries them.
func All() []Provider { return append([]Provider(nil), all...) }

// WithTier names the providers that offer tier.
func WithTier(tier string) []string {
	var names []string
	for _, p := range all {
		if slices.Contains(p.Tiers, tier) {
			names = append(names, p.Name)
		}
	}
	return names
}

// Names lists the provider names, sorted.
func Names() []string {
	var names []string
	for _, p := range all {
		names = append(names, p.Name)
	}
	sort.Strings(names)
	return names
}

// Lookup finds a provider by name.
func Lookup(name string) (Provider, error) {
	for _, p := range all {
		if p.Name == name {
			return p, nil
		}
	}
	return Provider{}, fmt.Errorf("unknown provider %q: choose one of %s", name, strings.Join(Names(), ", "))
}

// NewProtocol returns the wire protocol the provider speaks, in its
// dialect.
func (p Provider) NewProtocol() (providers.Protocol, error) {
	if p.New == nil {
		return nil, fmt.Errorf("%s names no wire protocol", p.Name)
	}
	return p.New(p), nil
}

// NewProtocol returns the wire protocol of that name, as the provider of
// the same name speaks it, or else the first provider speaking it.
func NewProtocol(name string) (providers.Protocol, error) {
	i := slices.IndexFunc(all, func(p Provider) bool { return p.Protocol == name && p.Name == name })
	if i < 0 {
		i = slices.IndexFunc(all, func(p Provider) bool { return p.Protocol == name })
	}
	if i < 0 {
		return nil, fmt.Errorf("unknown protocol %q", name)
	}
	return all[i].NewProtocol()
}

// Default is the provider chosen when nothing names one and no key
// variable is set.
func Default() Provider {
	return all[slices.IndexFunc(all, func(p Provider) bool { return p.Default })]
}

// Select picks the provider per DESIGN §3: the flag, then ASK_PROVIDER, then
// the configured default, then the first provider whose key is set, then
// the Default one (Ollama on localhost).
func Select(flag, configured string, getenv func(string) string) (Provider, error) {
	for _, name := range []string{flag, getenv("ASK_PROVIDER"), configured} {
		if name != "" {
			return Lookup(name)
		}
	}
	for _, p := range all {
		for _, v := range p.KeyEnv {
			if getenv(v) != "" {
				return p, nil
			}
		}
	}
	return Default(), nil
}

// ResolveBaseURL applies the precedence --base-url, ASK_BASE_URL, the
// provider's own variable, the default.
func (p Provider) ResolveBaseURL(flag string, getenv func(string) string) string {
	u := flag
	if u == "" {
		u = getenv("ASK_BASE_URL")
	}
	for _, v := range p.BaseURLEnv {
		if u == "" {
			u = getenv(v)
		}
	}
	if u == "" {
		u = p.BaseURL
	}
	// OLLAMA_HOST is often host:port without a scheme.
	if !strings.Contains(u, "://") {
		u = "http://" + u
	}
	return strings.TrimRight(u, "/")
}

// MissingKeyError says which variable to set.
type MissingKeyError struct {
	Provider string
	Vars     []string
}

func (e *MissingKeyError) Error() string {
	return fmt.Sprintf("no API key for %s: set %s (or choose another provider with --provider)", e.Provider, strings.Join(e.Vars, " or "))
}

// Key returns the provider's key from the environment. A provider that needs
// one and has none gives a *MissingKeyError.
func (p Provider) Key(getenv func(string) string) (string, error) {
	for _, v := range p.KeyEnv {
		if k := strings.TrimSpace(getenv(v)); k != "" {
			return k, nil
		}
	}
	if p.NeedsKey() {
		return "", &MissingKeyError{Provider: p.Name, Vars: p.KeyEnv}
	}
	return "", nil
}
