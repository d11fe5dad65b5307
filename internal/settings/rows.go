package settings

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/bytesize"
)

// Kind is the type of a setting's value.
type Kind int

// The kinds, each with its Go type: string, bool, int, float64,
// time.Duration and []string.
const (
	String Kind = iota
	Bool
	Int
	Float
	Duration
	List
)

// Row declares one flag of a run: a setting, or a flag about this one
// invocation (--json, --transcript), which has no field of Values.
type Row struct {
	Name  string // the flag's name, and `ask config`'s: "max-steps"
	Short string // the one-letter flag, "" for none
	// Key is the config file's key for it ("max_steps", "tools.allow");
	// "" when the file cannot give it.
	Key string
	// Env is the variable a run reads it from, "" for none.
	Env  string
	Kind Kind
	// Category groups it in --help, and names the man page's OPTIONS
	// subsection that documents it.
	Category string
	Default  any    // of the kind's type; nil for none
	Help     string // --help's line; a `WORD` in it names the value
	// Choices are the values it takes, when they are a fixed set.
	Choices []string
	// AfterPrompt rows may follow the prompt's first word: they shape
	// output or limits, or only narrow what the model may do. Any other
	// flag there is an error naming "--" (a file name that spells a flag
	// must not widen a run). For a switch, only its true value narrows.
	AfterPrompt bool
	// Adds joins the lists of every layer instead of replacing a lower
	// layer's (deny rules: each layer may only add to them).
	Adds bool
	// ConfigOnly rows have no flag: the config file (Key) gives them.
	ConfigOnly bool
	// Bound settings belong to one provider: the config file gives them
	// per provider, and a run resolves them once the provider is known.
	Bound bool
	// check says what is wrong with a value, "" when nothing is.
	check func(v any) string
	field func(*Values) slot
}

// IsSetting reports whether the row is a setting (has a field of Values),
// not a flag about one invocation.
func (r Row) IsSetting() bool { return r.field != nil }

func (r Row) slot(v *Values) slot { return r.field(v) }

// Check says what is wrong with v, a value of the row's kind, in the words
// a config file's error uses; "" when nothing is.
func (r Row) Check(v any) string {
	if len(r.Choices) > 0 {
		if s, _ := v.(string); !contains(r.Choices, s) {
			return fmt.Sprintf("%q: choose %s", s, OrList(r.Choices))
		}
	}
	if r.check != nil {
		return r.check(v)
	}
	return ""
}

// Valid values of the settings that have a fixed set (DESIGN §4).
var (
	Modes         = []string{"ask", "plan", "agent"}
	ToolProtocols = []string{"auto", "native", "json", "markdown"}
	Colors        = []string{"auto", "always", "never"}
	Sandboxes     = []string{"off", "workdir", "read-only"}
	// ReasoningLevels are those of providers.ReasoningLevels (this
	// package imports no provider code).
	ReasoningLevels = []string{"low", "medium", "high"}
	// Tiers are those of providers.Tiers.
	Tiers = []string{"flex", "background"}
	// CompactModes are the values of --compact.
	CompactModes = []string{"auto", "off"}
)

// The categories of --help and of the man page's OPTIONS.
const (
	CategoryProvider = "Provider and model"
	CategoryPrompt   = "Prompt and answer"
	CategoryTools    = "Tools and policy"
	CategoryLimits   = "Limits"
	CategoryOutput   = "Output"
)

// Built-in defaults that other packages need by name.
const (
	// DefaultMaxSteps is agent mode's; a run resolves its mode's.
	DefaultMaxSteps = 100
	DefaultTimeout  = 30 * time.Minute
	DefaultRetries  = 2
	DefaultMaxStdin = "1M"
	// DefaultMaxRounds is how many times --until's check runs.
	DefaultMaxRounds = 3
	// DefaultCompactAt is the share of the window (percent) a request
	// may fill before the run compacts.
	DefaultCompactAt = 80
)

func field[T any](f func(*Values) *Setting[T]) func(*Values) slot {
	return func(v *Values) slot { return f(v) }
}

// Rows are every flag of a run, in the order --help and `ask config` show
// them.
var Rows = sync.OnceValue(func() []Row {
	return []Row{
		{Name: "provider", Category: CategoryProvider, Short: "p", Key: "provider", Env: "ASK_PROVIDER", Kind: String,
			Help:  "provider: %s (default: $ASK_PROVIDER, else the first whose key is set)",
			field: field(func(v *Values) *Setting[string] { return &v.Provider })},
		{Name: "model", Category: CategoryProvider, Short: "m", Key: "model", Env: "ASK_MODEL", Kind: String, AfterPrompt: true, Bound: true,
			Help:  "model name (default: $ASK_MODEL, else the provider's default)",
			check: nonEmpty("name a model or remove the key"),
			field: field(func(v *Values) *Setting[string] { return &v.Model })},
		{Name: "base-url", Category: CategoryProvider, Env: "ASK_BASE_URL", Kind: String, Bound: true,
			Help:  "provider base URL (default: $ASK_BASE_URL, else the provider's variable or default)",
			field: field(func(v *Values) *Setting[string] { return &v.BaseURL })},
		{Name: "mode", Category: CategoryTools, Key: "mode", Kind: String, Default: "agent", Choices: Modes,
			Help:  "ask (read-only, at most 3 steps), plan (read-only, answers with a numbered plan) or agent (all tools)",
			field: field(func(v *Values) *Setting[string] { return &v.Mode })},
		{Name: "safe", Category: CategoryTools, Key: "safe", Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "CI profile: refuse every write, run commands only in the read-only sandbox (without asking), exit 6 on a refusal",
			field: field(func(v *Values) *Setting[bool] { return &v.Safe })},
		{Name: "max-steps", Category: CategoryLimits, Key: "max_steps", Kind: Int, Default: DefaultMaxSteps, AfterPrompt: true,
			Help:  "stop after this many model requests; plan mode's default is 20, and ask mode allows at most 3",
			check: atLeast(1, "must be at least 1"),
			field: field(func(v *Values) *Setting[int] { return &v.MaxSteps })},
		{Name: "timeout", Category: CategoryLimits, Key: "timeout", Kind: Duration, Default: DefaultTimeout, AfterPrompt: true,
			Help:  "stop the whole invocation (stdin, MCP servers, requests, tools) after this long; 0 for no limit",
			check: notNegative,
			field: field(func(v *Values) *Setting[time.Duration] { return &v.Timeout })},
		{Name: "until", Category: CategoryLimits, Kind: String, Default: "",
			Help:  "end the run only when the shell command line `CMD` succeeds: run it (in the working directory, in the run's sandbox, without asking) when the model answers, and send its failing output back, up to --max-rounds times",
			field: field(func(v *Values) *Setting[string] { return &v.Until })},
		{Name: "max-rounds", Category: CategoryLimits, Key: "max_rounds", Kind: Int, Default: DefaultMaxRounds, AfterPrompt: true,
			Help:  "run --until's check at most `N` times; when the last fails, the run ends check_failed (exit 5)",
			check: atLeast(1, "must be at least 1"),
			field: field(func(v *Values) *Setting[int] { return &v.MaxRounds })},
		{Name: "compact", Category: CategoryLimits, Key: "compact", Kind: String, Default: "auto", Choices: CompactModes, AfterPrompt: true,
			Help:  "when a request would fill --compact-at of the model's window: auto prunes old tool results, then summarises old steps; off ends the run at the window instead",
			field: field(func(v *Values) *Setting[string] { return &v.Compact })},
		{Name: "compact-at", Category: CategoryLimits, Key: "compact_at", Kind: Int, Default: DefaultCompactAt, AfterPrompt: true,
			Help:  "compact before a request would fill `PCT` percent of the model's input window",
			check: percent,
			field: field(func(v *Values) *Setting[int] { return &v.CompactAt })},
		{Name: "context-window", Category: CategoryLimits, Key: "context_window", Kind: Int, AfterPrompt: true,
			Help:  "the model's input window in tokens `N`, when the catalog and the provider's model listing do not know it",
			check: atLeast(1, "must be at least 1 (leave it out to use the catalog's or the provider's)"),
			field: field(func(v *Values) *Setting[int] { return &v.ContextWindow })},
		{Name: "max-budget-tokens", Category: CategoryLimits, Key: "max_budget_tokens", Kind: Int, AfterPrompt: true,
			Help:  "stop before a request once the run's input and output tokens reach `N` (exit 5), the last step answering without tools",
			check: atLeast(1, "must be at least 1 (leave it out for no budget)"),
			field: field(func(v *Values) *Setting[int] { return &v.MaxBudgetTokens })},
		{Name: "max-budget-usd", Category: CategoryLimits, Key: "max_budget_usd", Kind: Float, AfterPrompt: true,
			Help:  "stop before a request once the run has cost `USD` (exit 5), from the provider's reported cost or the config file's prices; a model whose cost cannot be known is an error",
			check: positive,
			field: field(func(v *Values) *Setting[float64] { return &v.MaxBudgetUSD })},
		{Name: "tool-protocol", Category: CategoryProvider, Key: "tool_protocol", Kind: String, Default: "auto", Choices: ToolProtocols,
			Help:  "how the model calls tools: auto (native where the provider has it, else json), native, or the text protocols json and markdown",
			field: field(func(v *Values) *Setting[string] { return &v.ToolProtocol })},
		{Name: "no-stream", Category: CategoryProvider, Key: "no_stream", Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "make plain requests instead of streaming",
			field: field(func(v *Values) *Setting[bool] { return &v.NoStream })},
		{Name: "no-cache", Category: CategoryProvider, Key: "no_cache", Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "do not ask the provider to cache the prompt (no cache_control marks, no prompt_cache_key)",
			field: field(func(v *Values) *Setting[bool] { return &v.NoCache })},
		{Name: "retries", Category: CategoryProvider, Key: "retries", Kind: Int, Default: DefaultRetries, AfterPrompt: true,
			Help:  "retry a failed request (connection error, HTTP 408, 409, 429, 5xx) up to `N` times, with backoff",
			check: atLeast(0, "must be 0 or more"),
			field: field(func(v *Values) *Setting[int] { return &v.Retries })},
		{Name: "max-tokens", Category: CategoryProvider, Key: "max_tokens", Kind: Int, Default: 0, AfterPrompt: true,
			Help:  "cap each model reply at `N` tokens (default: the provider's own)",
			check: atLeast(1, "must be at least 1 (leave it out for the provider's default)"),
			field: field(func(v *Values) *Setting[int] { return &v.MaxTokens })},
		{Name: "temperature", Category: CategoryProvider, Key: "temperature", Kind: Float, AfterPrompt: true,
			Help:  "sample at temperature `T`, from 0 to 2 (Anthropic, Moonshot: to 1)",
			check: temperatureRange,
			field: field(func(v *Values) *Setting[float64] { return &v.Temperature })},
		{Name: "reasoning", Category: CategoryProvider, Key: "reasoning", Kind: String, Default: "", Choices: ReasoningLevels, AfterPrompt: true,
			Help:  "how hard a reasoning model thinks, `LEVEL` low, medium or high: sent as the provider's own setting (effort, thinking budget or level)",
			field: field(func(v *Values) *Setting[string] { return &v.Reasoning })},
		{Name: "tier", Category: CategoryProvider, Key: "tier", Kind: String, Default: "", Choices: Tiers,
			Help:  "send at the provider's cheaper, slower service `TIER`: flex (OpenAI: half price, slower) or background (OpenAI Responses: queued, polled until done)",
			field: field(func(v *Values) *Setting[string] { return &v.Tier })},
		{Name: "allow-tool", Category: CategoryTools, Key: "tools.allow", Kind: List, Default: []string(nil),
			Help:  "run calls matching `PATTERN` (NAME or NAME:ARG-PREFIX*) without asking; repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.Allow })},
		{Name: "deny-tool", Category: CategoryTools, Key: "tools.deny", Kind: List, Default: []string(nil), AfterPrompt: true, Adds: true,
			Help:  "refuse calls matching `PATTERN`; wins over --allow-tool; adds to the config file's; repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.Deny })},
		{Name: "yes", Category: CategoryTools, Short: "y", Key: "tools.yes", Kind: Bool, Default: false,
			Help:  "approve every call that needs approval",
			field: field(func(v *Values) *Setting[bool] { return &v.Yes })},
		// Not AfterPrompt: it widens what the model may do.
		{Name: "accept-edits", Category: CategoryTools, Key: "tools.accept_edits", Kind: Bool, Default: false,
			Help:  "let the file tools change files inside the working directory without asking (never .git and the like); commands still ask",
			field: field(func(v *Values) *Setting[bool] { return &v.AcceptEdits })},
		{Name: "tools-file", Category: CategoryTools, Key: "tools.file", Kind: String, Default: "",
			Help:  "offer the commands declared in the JSON `FILE` as tools",
			field: field(func(v *Values) *Setting[string] { return &v.ToolsFile })},
		{Name: "mcp", Category: CategoryTools, Key: "mcp", Kind: List, Default: []string(nil),
			Help:  "start the MCP server `'CMD ARGS'` over stdio, or connect to the one at an http:// or https:// URL (streamable HTTP, else SSE), and offer its tools as SERVER__TOOL; repeatable",
			check: noEmptyServer,
			field: field(func(v *Values) *Setting[[]string] { return &v.MCP })},
		{Name: "no-project-file", Category: CategoryPrompt, Key: "no_project_file", Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "leave the project's AGENTS.md out of the system prompt",
			field: field(func(v *Values) *Setting[bool] { return &v.NoProjectFile })},
		{Name: "color", Category: CategoryOutput, Key: "color", Kind: String, Default: "auto", Choices: Colors, AfterPrompt: true,
			Help:  "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never",
			field: field(func(v *Values) *Setting[string] { return &v.Color })},
		{Name: "command", Category: CategoryProvider, Env: "ASK_COMMAND", Kind: String, Default: "",
			Help:  "with --provider command: the model to run once per step, conversation on stdin (e.g. 'ollama run qwen3')",
			field: field(func(v *Values) *Setting[string] { return &v.Command })},
		{Name: "system", Category: CategoryPrompt, Short: "s", Kind: String, Default: "",
			Help:  "text appended to the default system prompt",
			field: field(func(v *Values) *Setting[string] { return &v.System })},
		{Name: "attach", Category: CategoryPrompt, Short: "a", Kind: List,
			Help:  "send the image (PNG, JPEG, WebP, GIF) or PDF `FILE` with the prompt; repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.Attach })},
		{Name: "sandbox", Category: CategoryTools, Kind: String, Default: "off", Choices: Sandboxes,
			Help:  "confine the commands tools run: off, workdir (write only there and in a scratch directory) or read-only; no network unless --allow-network",
			field: field(func(v *Values) *Setting[string] { return &v.Sandbox })},
		{Name: "allow-network", Category: CategoryTools, Kind: Bool, Default: false,
			Help:  "let sandboxed commands reach the network",
			field: field(func(v *Values) *Setting[bool] { return &v.AllowNetwork })},
		{Name: "allow-host", Category: CategoryTools, Kind: List, Default: []string(nil), Key: "sandbox.allow_hosts",
			Help:  "let sandboxed commands reach `HOST` (or *.example.com) on ports 80 and 443, through ask's proxy (HTTP_PROXY); repeatable",
			check: hostPatterns,
			field: field(func(v *Values) *Setting[[]string] { return &v.AllowHosts })},
		{Name: "sandbox-hide", Category: CategoryTools, ConfigOnly: true, Kind: List, Default: []string(nil), Key: "sandbox.hide", Adds: true,
			Help:  "hide the file or directory `PATH` from sandboxed commands too, besides the credential stores; repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.SandboxHide })},
		{Name: "sandbox-env", Category: CategoryTools, ConfigOnly: true, Kind: List, Default: []string(nil), Key: "sandbox.env",
			Help:  "under --safe, pass the environment variable `NAME` on to commands too (they get only what a build needs); repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.SandboxEnv })},
		{Name: "sandbox-max-processes", Category: CategoryTools, ConfigOnly: true, Kind: Int, Default: 0, Key: "sandbox.max_processes",
			Help:  "the most processes and threads one sandboxed command may have at once (0: 1024)",
			check: atLeast(0, "must be 0 (the default) or more"),
			field: field(func(v *Values) *Setting[int] { return &v.SandboxMaxProcesses })},
		{Name: "sandbox-scratch-size", Category: CategoryTools, ConfigOnly: true, Kind: String, Default: "", Key: "sandbox.scratch_size",
			Help:  "the sandbox's scratch space for the whole run, a `SIZE` such as 512M or 2G (default 2G)",
			check: byteSize,
			field: field(func(v *Values) *Setting[string] { return &v.SandboxScratchSize })},
		{Name: "sandbox-mcp", Category: CategoryTools, Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "start the MCP servers' commands inside the sandbox too (a remote server is reached by ask itself, never sandboxed)",
			field: field(func(v *Values) *Setting[bool] { return &v.SandboxMCP })},
		{Name: "no-hooks", Category: CategoryTools, Kind: Bool, Default: false,
			Help:  "run none of the config file's hooks (a hook may deny calls, so this is no flag for after the prompt)",
			field: field(func(v *Values) *Setting[bool] { return &v.NoHooks })},
		{Name: "no-tools", Category: CategoryTools, Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "offer the model no tools",
			field: field(func(v *Values) *Setting[bool] { return &v.NoTools })},
		{Name: "no-mcp", Category: CategoryTools, Key: "no_mcp", Kind: Bool, Default: false, AfterPrompt: true,
			Help:  "start no MCP server: neither the config file's mcpServers nor --mcp",
			field: field(func(v *Values) *Setting[bool] { return &v.NoMCP })},
		{Name: "mcp-header", Category: CategoryTools, Kind: List, Default: []string(nil),
			Help:  "send the header `'NAME: VALUE'` to every --mcp URL; ${VAR} in VALUE is read from the environment, and a credential must come that way ('Authorization: Bearer ${TOKEN}'); repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.MCPHeaders })},
		{Name: "workdir", Category: CategoryTools, Kind: String, Default: ".",
			Help:  "the directory the tools work in; file tools never reach outside it",
			field: field(func(v *Values) *Setting[string] { return &v.Workdir })},
		{Name: "schema", Category: CategoryPrompt, Kind: String, Default: "",
			Help:  "answer with JSON matching this JSON Schema: a `FILE`, or the schema itself when it starts with {",
			field: field(func(v *Values) *Setting[string] { return &v.Schema })},

		// Flags about this invocation only.
		{Name: "profile", Category: CategoryOutput, Env: "ASK_PROFILE", Kind: String,
			Help: "use profile `NAME` of the config file over its top-level settings (default: $ASK_PROFILE)"},
		{Name: "plan", Category: CategoryPrompt, Kind: String, Help: "carry out the plan saved in `FILE` (with --mode agent)"},
		{Name: "json", Category: CategoryOutput, Kind: Bool, AfterPrompt: true,
			Help: "print one JSON object with the answer, status, steps, tool calls and usage"},
		{Name: "events", Category: CategoryOutput, Kind: Bool, AfterPrompt: true, Help: "print every event as a JSON line as it happens"},
		{Name: "transcript", Category: CategoryOutput, Kind: String, Help: "write every event to `FILE` as JSON lines"},
		{Name: "quiet", Category: CategoryOutput, Short: "q", Kind: Bool, AfterPrompt: true, Help: "print only errors on stderr"},
		{Name: "verbose", Category: CategoryOutput, Short: "v", Kind: Bool, AfterPrompt: true, Help: "describe each request, retry and tool call on stderr"},
		{Name: "continue", Category: CategoryPrompt, Short: "c", Kind: Bool,
			Help: "carry on the conversation of the last run in this directory (--workdir), with its provider, model, mode and tools unless flags say otherwise"},
		{Name: "resume", Category: CategoryPrompt, Kind: String, Help: "carry on the conversation of the transcript `FILE`, or of a kept run's ID (see ask log)"},
		{Name: "no-stdin", Category: CategoryPrompt, Kind: Bool, AfterPrompt: true, Help: "never read stdin (in a while-read loop, or when stdin stays open)"},
		{Name: "max-stdin", Category: CategoryPrompt, Kind: String, Default: DefaultMaxStdin, AfterPrompt: true,
			Help: "the most piped context to read, a `SIZE` such as 512K, 4M or 1G; more is an error"},
	}
})

// Lookup finds the row named name (its long name).
func Lookup(name string) (Row, bool) {
	for _, r := range Rows() {
		if r.Name == name {
			return r, true
		}
	}
	return Row{}, false
}

// byteSize checks a size such as 2G ("" is the default).
func byteSize(v any) string {
	s, _ := v.(string)
	if s == "" {
		return ""
	}
	if n, err := bytesize.Parse(s); err != nil || n <= 0 {
		return fmt.Sprintf("%q: give a size such as 512M or 2G", s)
	}
	return ""
}

// hostPatterns checks --allow-host values: a host name, an IP address, or
// *. and a domain; no scheme, port or path.
func hostPatterns(v any) string {
	list, _ := v.([]string)
	for _, h := range list {
		name := strings.TrimPrefix(h, "*.")
		ipv6 := strings.Count(name, ":") > 1
		if name == "" || strings.ContainsAny(name, "/@* \t") || !ipv6 && strings.Contains(name, ":") {
			return fmt.Sprintf("%q: give a host name such as proxy.golang.org or *.npmjs.org, without a scheme, port or path", h)
		}
	}
	return ""
}

func atLeast(n int, msg string) func(any) string {
	return func(v any) string {
		if i, _ := v.(int); i < n {
			return msg
		}
		return ""
	}
}

func nonEmpty(msg string) func(any) string {
	return func(v any) string {
		if s, _ := v.(string); s == "" {
			return "is empty: " + msg
		}
		return ""
	}
}

func notNegative(v any) string {
	if d, _ := v.(time.Duration); d < 0 {
		return fmt.Sprintf("%q: give a duration such as 30s or 5m, or 0 for none", d.String())
	}
	return ""
}

func percent(v any) string {
	if i, _ := v.(int); i < 1 || i > 100 {
		return fmt.Sprintf("%d: give a percentage from 1 to 100", i)
	}
	return ""
}

func positive(v any) string {
	if f, _ := v.(float64); f <= 0 {
		return fmt.Sprintf("%g: give an amount above 0 (leave it out for no budget)", f)
	}
	return ""
}

// The provider's own range is checked when a run knows the provider.
func temperatureRange(v any) string {
	if t, _ := v.(float64); t < 0 || t > 2 {
		return fmt.Sprintf("%g: give a number from 0 to 2", t)
	}
	return ""
}

func noEmptyServer(v any) string {
	l, _ := v.([]string)
	for i, line := range l {
		if strings.TrimSpace(line) == "" {
			return fmt.Sprintf("server %d is empty: give the command that starts it", i+1)
		}
	}
	return ""
}

// OrList joins values as "a, b or c".
func OrList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
