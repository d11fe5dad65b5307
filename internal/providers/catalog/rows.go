package catalog

import (
	"net/http"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/anthropic"
	"github.com/ask-cli/ask/internal/providers/command"
	"github.com/ask-cli/ask/internal/providers/gemini"
	"github.com/ask-cli/ask/internal/providers/ollama"
	"github.com/ask-cli/ask/internal/providers/openai"
	"github.com/ask-cli/ask/internal/providers/responses"
)

// The rows: adding a provider is its protocol package and one row here.

const mib = 1 << 20

// The providers' own limits (man/ask.1, --attach):
var (
	// OpenAI: an image up to 20 MB, files up to 32 MB, a request body up
	// to 50 MB, which 32 MiB of files fill once in base64. OpenRouter
	// passes the same parts on.
	openAIAttach = &AttachLimits{PDF: true, MaxImage: 20 * mib, MaxPDF: 32 * mib, MaxTotal: 32 * mib}
	// Anthropic: an image up to 5 MB, a request up to 32 MB, which 24 MiB
	// of files fill in base64.
	anthropicAttach = &AttachLimits{PDF: true, MaxImage: 5 * mib, MaxPDF: 24 * mib, MaxTotal: 24 * mib}
	// Gemini: inline data and the rest of the request up to 20 MB, which
	// 14 MiB of files nearly fill in base64.
	geminiAttach = &AttachLimits{PDF: true, MaxImage: 14 * mib, MaxPDF: 14 * mib, MaxTotal: 14 * mib}
	// Ollama, LM Studio and Moonshot take images only and document no
	// size; ask's own cap keeps a request within what it would read back.
	imagesOnly = &AttachLimits{MaxImage: 20 * mib, MaxTotal: 20 * mib}
)

// attribution identifies ask to OpenRouter's app rankings.
var attribution = http.Header{
	"Http-Referer":       {"https://github.com/ask-cli/ask"},
	"X-Openrouter-Title": {"ask"},
	"X-Title":            {"ask"},
}

// openAITierRates: flex "tokens are priced at Batch API rates", half the
// listed price (developers.openai.com/api/docs/guides/flex-processing);
// background mode is billed as a standard request.
var openAITierRates = map[string]float64{providers.TierFlex: 0.5}

var all = []Provider{
	{Name: "openrouter", Protocol: "openai", New: chatCompletions, BaseURL: "https://openrouter.ai/api/v1", BaseURLEnv: []string{"OPENROUTER_BASE_URL"},
		KeyEnv: []string{"OPENROUTER_API_KEY"}, DefaultModel: "openai/gpt-4o-mini", Header: attribution, NativeTools: true, Streaming: true, NativeSchema: true,
		MaxTemperature: 2, Reasoning: ReasoningObject, Attach: openAIAttach,
		// OpenRouter passes cache_control on to Claude, and to Gemini, which
		// reads the last mark; the other models it serves cache by
		// themselves.
		CacheMarks: []string{"anthropic/", "google/gemini"}, PublicModels: true, ReportsCost: true, ListsWindow: true},
	{Name: "openai", Protocol: "openai", New: chatCompletions, BaseURL: "https://api.openai.com/v1", BaseURLEnv: []string{"OPENAI_BASE_URL"},
		KeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: "gpt-4o-mini", NativeTools: true, Streaming: true, NativeSchema: true, MaxTemperature: 2, Reasoning: ReasoningEffort, Attach: openAIAttach, CacheKey: true,
		Tiers: []string{providers.TierFlex}, TierPriceRates: openAITierRates},
	{Name: "openai-responses", Protocol: "responses", New: only(responses.New), BaseURL: "https://api.openai.com/v1", BaseURLEnv: []string{"OPENAI_BASE_URL"},
		KeyEnv: []string{"OPENAI_API_KEY"}, DefaultModel: "gpt-4o-mini", NativeTools: true, Streaming: true, NativeSchema: true, MaxTemperature: 2, Reasoning: ReasoningObject, Attach: openAIAttach, CacheKey: true,
		Tiers: []string{providers.TierFlex, providers.TierBackground}, TierPriceRates: openAITierRates},
	{Name: "anthropic", Protocol: "anthropic", New: only(anthropic.New), BaseURL: "https://api.anthropic.com/v1", BaseURLEnv: []string{"ANTHROPIC_BASE_URL"},
		KeyEnv: []string{"ANTHROPIC_API_KEY"}, DefaultModel: "claude-sonnet-4-5", NativeTools: true, Streaming: true, NativeSchema: true,
		MaxTemperature: 1, Reasoning: Thinking, Attach: anthropicAttach, CacheMarks: []string{""}},
	{Name: "gemini", Protocol: "gemini", New: only(gemini.New), BaseURL: "https://generativelanguage.googleapis.com/v1beta", BaseURLEnv: []string{"GEMINI_BASE_URL"},
		KeyEnv: []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"}, DefaultModel: "gemini-2.5-flash", NativeTools: true, Streaming: true, NativeSchema: true, StreamInURL: true,
		MaxTemperature: 2, Reasoning: ThinkingConfig, Attach: geminiAttach},
	{Name: "ollama", Protocol: "ollama", New: only(ollama.New), BaseURL: "http://localhost:11434", BaseURLEnv: []string{"OLLAMA_HOST"},
		KeyEnv: []string{"OLLAMA_API_KEY"}, KeyOptional: true, Default: true, DefaultModel: "qwen3", NativeTools: true, Streaming: true, NativeSchema: true, StreamsByDefault: true,
		MaxTemperature: 2, Reasoning: Think, Attach: imagesOnly, ListsWindow: true},
	{Name: "deepseek", Protocol: "openai", New: chatCompletions, BaseURL: "https://api.deepseek.com", BaseURLEnv: []string{"DEEPSEEK_BASE_URL"},
		KeyEnv: []string{"DEEPSEEK_API_KEY"}, DefaultModel: "deepseek-chat", NativeTools: true, Streaming: true,
		MaxTemperature: 2, Reasoning: ReasoningEffort},
	{Name: "moonshot", Protocol: "openai", New: chatCompletions, BaseURL: "https://api.moonshot.ai/v1", BaseURLEnv: []string{"MOONSHOT_BASE_URL"},
		KeyEnv: []string{"MOONSHOT_API_KEY"}, DefaultModel: "kimi-k2-0905-preview", NativeTools: true, Streaming: true, NativeSchema: true,
		MaxTemperature: 1, Attach: imagesOnly},
	{Name: "lmstudio", Protocol: "openai", New: chatCompletions, BaseURL: "http://localhost:1234/v1", BaseURLEnv: []string{"LMSTUDIO_BASE_URL"},
		DefaultModel: "", NativeTools: true, Streaming: true, NativeSchema: true, MaxTemperature: 2, Reasoning: ReasoningEffort, Attach: imagesOnly},
	// A local program run once per step (--command); it speaks plain text,
	// always under the text tool protocol.
	{Name: "command", Protocol: "command", New: only(command.NewPlain), DefaultModel: "command", LocalProgram: true},
}

// chatCompletions builds the Chat Completions protocol in a server's
// dialect: how it takes --reasoning, and whether it takes an answer schema.
func chatCompletions(p Provider) providers.Protocol {
	return &openai.Protocol{ReasoningObject: p.Reasoning == ReasoningObject, NoResponseFormat: !p.NativeSchema}
}

// only is the constructor of a protocol that has one dialect.
func only[P providers.Protocol](build func() P) func(Provider) providers.Protocol {
	return func(Provider) providers.Protocol { return build() }
}
