package settings

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/worktree"
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
	// widen is the row's widening mark (see Widens): nil for a row no
	// value of which lets a model do more than the command line allows.
	widen func(v, upper any) string
	// paths: its values are paths that must lie inside the working
	// directory, whose links RealPaths resolves before the mark is read.
	paths bool
	// Adds joins the lists of every layer instead of replacing a lower
	// layer's (deny rules: each layer may only add to them).
	Adds bool
	// ConfigOnly rows have no flag: the config file (Key) gives them.
	ConfigOnly bool
	// Recorded settings are the recorded run's when a transcript is
	// replayed: a replay takes them from the transcript, never from the
	// replaying invocation's flags, environment or config file. The others
	// (the policy: --yes, the rules, --safe, the sandbox, …) are the
	// replaying invocation's, never the transcript's.
	Recorded bool
	// Bare, when set, is the value of the flag typed without one: such a
	// flag takes its value only after "=" (--worktree, --worktree=NAME).
	Bare string
	// Bound settings belong to one provider: the config file gives them
	// per provider, and a run resolves them once the provider is known.
	Bound bool
	// check says what is wrong with a value of the kind, "" when nothing
	// is; Parse runs it for every layer.
	check func(v any) string
	field func(*Values) slot
	// samples are values for the tests generated from the rows.
	samples samples
}

// IsSetting reports whether the row is a setting (has a field of Values),
// not a flag about one invocation.
func (r Row) IsSetting() bool { return r.field != nil }

func (r Row) slot(v *Values) slot { return r.field(v) }

// Valid values of the settings that have a fixed set (DESIGN §4).
var (
	Modes         = []string{"ask", "plan", "agent"}
	ToolProtocols = []string{"auto", "native", "json", "markdown"}
	Colors        = []string{"auto", "always", "never"}
	Sandboxes     = []string{"off", "workdir", "read-only"}
	// SandboxesStrictFirst are Sandboxes from the strictest.
	SandboxesStrictFirst = []string{"read-only", "workdir", "off"}
	// ReasoningLevels and Tiers are the providers' own lists.
	ReasoningLevels = providers.ReasoningLevels
	Tiers           = providers.Tiers
	// CompactModes are the values of --compact.
	CompactModes = []string{"auto", "off"}
	// OnApprovals are --on-approval's: deny, or defer for ask resume.
	OnApprovals = []string{"deny", "defer"}
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
	// DefaultMaxAgents is how many subagents run at once.
	DefaultMaxAgents = 4
)

func field[T any](f func(*Values) *Setting[T]) func(*Values) slot {
	return func(v *Values) slot { return f(v) }
}

// Rows are every flag of a run, in the order --help and `ask config` show
// them.
var Rows = sync.OnceValue(func() []Row {
	return []Row{
		// Widening: a local program runs on this machine, outside any sandbox.
		{Name: "provider", Category: CategoryProvider, Short: "p", Key: "provider", Env: "ASK_PROVIDER", Kind: String,
			Recorded: true,
			samples:  samples{good: []string{"openai", "anthropic"}, bad: []string{"nope"}, wide: "command"},
			widen:    localProgram,
			Help:     "provider: %s (default: $ASK_PROVIDER, else the first whose key is set)",
			field:    field(func(v *Values) *Setting[string] { return &v.Provider })},
		// Widening: never widens: which model answers, not what it may do.
		{Name: "model", Category: CategoryProvider, Short: "m", Key: "model", Env: "ASK_MODEL", Kind: String, Bound: true,
			Recorded: true,
			samples:  samples{good: []string{"gpt-x"}},
			Help:     "model name (default: $ASK_MODEL, else the provider's default)",
			check:    nonEmpty("name a model or remove the key"),
			field:    field(func(v *Values) *Setting[string] { return &v.Model })},
		// Widening: the conversation and the key go where it says.
		{Name: "base-url", Category: CategoryProvider, Env: "ASK_BASE_URL", Kind: String, Bound: true,
			Recorded: true,
			samples:  samples{good: []string{"https://api.example.com/v1"}, bad: []string{"ftp://example.com/v1", "http://"}, wide: "https://elsewhere.example/v1"},
			widen:    unlessSame("it sends the conversation and the key elsewhere"),
			Help:     "provider base URL (default: $ASK_BASE_URL, else the provider's variable or default)",
			check:    baseURL,
			field:    field(func(v *Values) *Setting[string] { return &v.BaseURL })},
		// Widening: ask is stricter than plan, plan than agent.
		{Name: "mode", Category: CategoryTools, Key: "mode", Kind: String, Default: "agent", Choices: Modes,
			Recorded: true,
			samples:  samples{wide: "agent", over: "ask"},
			widen:    stricterOnly(Modes...),
			Help:     "ask (read-only, at most 3 steps), plan (read-only, answers with a numbered plan) or agent (all tools)",
			field:    field(func(v *Values) *Setting[string] { return &v.Mode })},
		// Widening: only its true value narrows.
		{Name: "safe", Category: CategoryTools, Key: "safe", Kind: Bool, Default: false,
			samples: samples{wide: "false", over: "true"},
			widen:   switchWidens(false, "it turns --safe off"),
			Help:    "CI profile: refuse every write, run commands only in the read-only sandbox (without asking), exit 6 on a refusal",
			field:   field(func(v *Values) *Setting[bool] { return &v.Safe })},
		// Widening: a limit: a lower layer may only lower it.
		{Name: "max-steps", Category: CategoryLimits, Key: "max_steps", Kind: Int, Default: DefaultMaxSteps,
			Recorded: true,
			samples:  samples{wide: "20", over: "10"},
			widen:    lowersOnly(amount),
			Help:     "stop after this many model requests; plan mode's default is 20, and ask mode allows at most 3",
			check:    atLeast(1, "must be at least 1"),
			field:    field(func(v *Values) *Setting[int] { return &v.MaxSteps })},
		// Widening: a limit (0 is none): a lower layer may only lower it.
		{Name: "timeout", Category: CategoryLimits, Key: "timeout", Kind: Duration, Default: DefaultTimeout,
			Recorded: true,
			samples:  samples{wide: "0", over: "1m"},
			widen:    lowersOnly(amountOrNone),
			Help:     "stop the whole invocation (stdin, MCP servers, requests, tools) after this long; 0 for no limit",
			check:    notNegative,
			field:    field(func(v *Values) *Setting[time.Duration] { return &v.Timeout })},
		// Widening: the check runs without asking.
		{Name: "until", Category: CategoryLimits, Kind: String, Default: "",
			samples: samples{good: []string{"go test ./..."}, wide: "make check"},
			widen:   unlessSame("it runs a shell command without asking"),
			Help:    "end the run only when the shell command line `CMD` succeeds: run it (in the working directory, in the run's sandbox, without asking) when the model answers, and send its failing output back, up to --max-rounds times",
			field:   field(func(v *Values) *Setting[string] { return &v.Until })},
		// Widening: a limit: a lower layer may only lower it.
		{Name: "max-rounds", Category: CategoryLimits, Key: "max_rounds", Kind: Int, Default: DefaultMaxRounds,
			samples: samples{good: []string{"2"}, wide: "5", over: "3"},
			widen:   lowersOnly(amount),
			Help:    "run --until's check at most `N` times; when the last fails, the run ends check_failed (exit 5)",
			check:   atLeast(1, "must be at least 1"),
			field:   field(func(v *Values) *Setting[int] { return &v.MaxRounds })},
		// Widening: never widens: how a long conversation is kept.
		{Name: "compact", Category: CategoryLimits, Key: "compact", Kind: String, Default: "auto", Choices: CompactModes,
			Recorded: true,
			Help:     "when a request would fill --compact-at of the model's window: auto prunes old tool results, then summarises old steps; off ends the run at the window instead",
			field:    field(func(v *Values) *Setting[string] { return &v.Compact })},
		// Widening: never widens: when a long conversation is compacted.
		{Name: "compact-at", Category: CategoryLimits, Key: "compact_at", Kind: Int, Default: DefaultCompactAt,
			Recorded: true,
			samples:  samples{bad: []string{"0", "101"}},
			Help:     "compact before a request would fill `PCT` percent of the model's input window",
			check:    percent,
			field:    field(func(v *Values) *Setting[int] { return &v.CompactAt })},
		// Widening: never widens: the model's window, which compaction keeps under.
		{Name: "context-window", Category: CategoryLimits, Key: "context_window", Kind: Int,
			Recorded: true,
			Help:     "the model's input window in tokens `N`, when the provider's model listing does not give it",
			check:    atLeast(1, "must be at least 1 (leave it out to use the provider's)"),
			field:    field(func(v *Values) *Setting[int] { return &v.ContextWindow })},
		// Widening: a limit (none when not given): only lowered.
		{Name: "max-budget-tokens", Category: CategoryLimits, Key: "max_budget_tokens", Kind: Int,
			samples: samples{wide: "2000", over: "1000"},
			widen:   lowersOnly(amountOrNone),
			Help:    "stop before a request once the run's input and output tokens reach `N` (exit 5), the last step answering without tools",
			check:   atLeast(1, "must be at least 1 (leave it out for no budget)"),
			field:   field(func(v *Values) *Setting[int] { return &v.MaxBudgetTokens })},
		// Widening: a limit (none when not given): only lowered.
		{Name: "max-budget-usd", Category: CategoryLimits, Key: "max_budget_usd", Kind: Float,
			samples: samples{wide: "2", over: "1"},
			widen:   lowersOnly(amountOrNone),
			Help:    "stop before a request once the run has cost `USD` (exit 5), from the provider's reported cost or the config file's prices; a model whose cost cannot be known is an error",
			check:   positive,
			field:   field(func(v *Values) *Setting[float64] { return &v.MaxBudgetUSD })},
		// Widening: never widens: how calls are written, not which are allowed.
		{Name: "tool-protocol", Category: CategoryProvider, Key: "tool_protocol", Kind: String, Default: "auto", Choices: ToolProtocols,
			Recorded: true,
			Help:     "how the model calls tools: auto (native where the provider has it, else json), native, or the text protocols json and markdown",
			field:    field(func(v *Values) *Setting[string] { return &v.ToolProtocol })},
		// Widening: never widens: how replies arrive.
		{Name: "no-stream", Category: CategoryProvider, Key: "no_stream", Kind: Bool, Default: false,
			Recorded: true,
			Help:     "make plain requests instead of streaming",
			field:    field(func(v *Values) *Setting[bool] { return &v.NoStream })},
		// Widening: never widens: a request's cache marks.
		{Name: "no-cache", Category: CategoryProvider, Key: "no_cache", Kind: Bool, Default: false,
			Recorded: true,
			Help:     "do not ask the provider to cache the prompt (no cache_control marks, no prompt_cache_key)",
			field:    field(func(v *Values) *Setting[bool] { return &v.NoCache })},
		// Widening: never widens: retries of one request, within the timeout.
		{Name: "retries", Category: CategoryProvider, Key: "retries", Kind: Int, Default: DefaultRetries,
			Help:  "retry a failed request (connection error, HTTP 408, 409, 429, 5xx) up to `N` times, with backoff",
			check: atLeast(0, "must be 0 or more"),
			field: field(func(v *Values) *Setting[int] { return &v.Retries })},
		// Widening: never widens: the length of a reply.
		{Name: "max-tokens", Category: CategoryProvider, Key: "max_tokens", Kind: Int, Default: 0,
			Recorded: true,
			Help:     "cap each model reply at `N` tokens (default: the provider's own)",
			check:    atLeast(1, "must be at least 1 (leave it out for the provider's default)"),
			field:    field(func(v *Values) *Setting[int] { return &v.MaxTokens })},
		// Widening: never widens: sampling.
		{Name: "temperature", Category: CategoryProvider, Key: "temperature", Kind: Float,
			Recorded: true,
			samples:  samples{bad: []string{"3"}},
			Help:     "sample at temperature `T`, from 0 to 2 (Anthropic, Moonshot: to 1)",
			check:    temperatureRange,
			field:    field(func(v *Values) *Setting[float64] { return &v.Temperature })},
		// Widening: never widens: sampling.
		{Name: "reasoning", Category: CategoryProvider, Key: "reasoning", Kind: String, Default: "", Choices: ReasoningLevels,
			Recorded: true,
			Help:     "how hard a reasoning model thinks, `LEVEL` low, medium or high: sent as the provider's own setting (effort, thinking budget or level)",
			field:    field(func(v *Values) *Setting[string] { return &v.Reasoning })},
		// Widening: never widens: the price and pace of requests.
		{Name: "tier", Category: CategoryProvider, Key: "tier", Kind: String, Default: "", Choices: Tiers,
			Recorded: true,
			Help:     "send at the provider's cheaper, slower service `TIER`: flex (OpenAI: half price, slower) or background (OpenAI Responses: queued, polled until done)",
			field:    field(func(v *Values) *Setting[string] { return &v.Tier })},
		// Widening: an allow list: a lower layer may only keep some of its rules.
		{Name: "allow-tool", Category: CategoryTools, Key: "tools.allow", Kind: List, Default: []string(nil),
			samples: samples{good: []string{"shell:git *", "read_file"}, bad: []string{":x"}, wide: "shell"},
			widen:   shrinksOnly("it allows calls the command line does not"),
			Help:    "run calls matching `PATTERN` (NAME or NAME:ARG-PREFIX*) without asking; repeatable",
			check:   toolPatterns,
			field:   field(func(v *Values) *Setting[[]string] { return &v.Allow })},
		// Widening: never widens: deny rules add up (Adds).
		{Name: "deny-tool", Category: CategoryTools, Key: "tools.deny", Kind: List, Default: []string(nil), Adds: true,
			samples: samples{good: []string{"shell:rm*"}, bad: []string{":x"}},
			Help:    "refuse calls matching `PATTERN`; wins over --allow-tool; adds to the config file's; repeatable",
			check:   toolPatterns,
			field:   field(func(v *Values) *Setting[[]string] { return &v.Deny })},
		// Widening: never widens: a deferred call runs only when ask resume
		// decides it under its own policy; defer rules add up (Adds).
		{Name: "defer-tool", Category: CategoryTools, Key: "defer_tools", Kind: List, Default: []string(nil), Adds: true,
			samples: samples{good: []string{"shell:git push*"}, bad: []string{":x"}},
			Help:    "defer calls matching `PATTERN` (rule syntax): the run stops with status deferred, exit 7, and ask resume decides them; adds to the config file's; repeatable",
			check:   toolPatterns,
			field:   field(func(v *Values) *Setting[[]string] { return &v.DeferTools })},
		// Widening: never widens: a deferred call runs only when ask resume
		// decides it.
		{Name: "on-approval", Category: CategoryTools, Key: "on_approval", Kind: String, Default: "deny", Choices: OnApprovals,
			Help:  "what a call that needs approval gets, `ANSWER` deny or defer, when no terminal can ask and nothing else decides it: defer pauses the run for ask resume (exit 7)",
			field: field(func(v *Values) *Setting[string] { return &v.OnApproval })},
		// Widening: only its false value narrows.
		{Name: "yes", Category: CategoryTools, Short: "y", Key: "tools.yes", Kind: Bool, Default: false,
			widen: switchWidens(true, "it approves every call"),
			Help:  "approve every call that needs approval",
			field: field(func(v *Values) *Setting[bool] { return &v.Yes })},
		// Widening: only its false value narrows.
		{Name: "accept-edits", Category: CategoryTools, Key: "tools.accept_edits", Kind: Bool, Default: false,
			widen: switchWidens(true, "it lets the file tools write without asking"),
			Help:  "let the file tools change files inside the working directory without asking (never .git and the like); commands still ask",
			field: field(func(v *Values) *Setting[bool] { return &v.AcceptEdits })},
		// Widening: its commands run as tools.
		{Name: "tools-file", Category: CategoryTools, Key: "tools.file", Kind: String, Default: "",
			Recorded: true,
			samples:  samples{good: []string{"tools.json"}, wide: "tools.json"},
			widen:    unlessSame("it offers the commands of another file as tools"),
			Help:     "offer the commands declared in the JSON `FILE` as tools",
			field:    field(func(v *Values) *Setting[string] { return &v.ToolsFile })},
		// Widening: a server is a program or a remote service.
		{Name: "mcp", Category: CategoryTools, Key: "mcp", Kind: List, Default: []string(nil),
			Recorded: true,
			samples:  samples{good: []string{"server --stdio"}, bad: []string{" "}, wide: "server --stdio"},
			widen:    shrinksOnly("it starts or connects to a server the command line does not name"),
			Help:     "start the MCP server `'CMD ARGS'` over stdio, or connect to the one at an http:// or https:// URL (streamable HTTP, else SSE), and offer its tools as SERVER__TOOL; repeatable",
			check:    noEmptyServer,
			field:    field(func(v *Values) *Setting[[]string] { return &v.MCP })},
		// Widening: never widens: it only leaves text out.
		{Name: "no-project-file", Category: CategoryPrompt, Key: "no_project_file", Kind: Bool, Default: false,
			Help:  "leave the project's AGENTS.md out of the system prompt",
			field: field(func(v *Values) *Setting[bool] { return &v.NoProjectFile })},
		// Widening: never widens: presentation.
		{Name: "color", Category: CategoryOutput, Key: "color", Kind: String, Default: "auto", Choices: Colors,
			Help:  "colour on stderr: auto (on a terminal, unless NO_COLOR is set), always or never",
			field: field(func(v *Values) *Setting[string] { return &v.Color })},
		// Widening: the program runs unconfined.
		{Name: "command", Category: CategoryProvider, Env: "ASK_COMMAND", Kind: String, Default: "",
			samples: samples{good: []string{"ollama run qwen3"}, wide: "sh -c 'touch x'"},
			widen:   unlessSame("it runs a program on this machine as the model"),
			Help:    "with --provider command: the model to run once per step, conversation on stdin (e.g. 'ollama run qwen3')",
			field:   field(func(v *Values) *Setting[string] { return &v.Command })},
		// Widening: never widens: text, as the prompt is.
		{Name: "system", Category: CategoryPrompt, Short: "s", Kind: String, Default: "",
			Recorded: true,
			Help:     "text appended to the default system prompt",
			field:    field(func(v *Values) *Setting[string] { return &v.System })},
		// Widening: a file outside the working directory would go to the model.
		{Name: "attach", Category: CategoryPrompt, Short: "a", Kind: List,
			Recorded: true,
			samples:  samples{good: []string{"a.png"}, wide: "/etc/passwd"},
			paths:    true,
			widen:    insideWorkdir("it sends a file from outside the working directory"),
			Help:     "send the image (PNG, JPEG, WebP, GIF) or PDF `FILE` with the prompt; repeatable",
			field:    field(func(v *Values) *Setting[[]string] { return &v.Attach })},
		// Widening: read-only is stricter than workdir, workdir than off.
		{Name: "sandbox", Category: CategoryTools, Kind: String, Default: "off", Choices: Sandboxes,
			samples: samples{wide: "off", over: "read-only"},
			widen:   stricterOnly(SandboxesStrictFirst...),
			Help:    "confine the commands tools run: off, workdir (write only there and in a scratch directory) or read-only; no network unless --allow-network",
			field:   field(func(v *Values) *Setting[string] { return &v.Sandbox })},
		// Widening: only its false value narrows.
		{Name: "allow-network", Category: CategoryTools, Kind: Bool, Default: false,
			widen: switchWidens(true, "it lets commands reach the network"),
			Help:  "let sandboxed commands reach the network",
			field: field(func(v *Values) *Setting[bool] { return &v.AllowNetwork })},
		// Widening: an allow list: only shrinks.
		{Name: "allow-host", Category: CategoryTools, Kind: List, Default: []string(nil), Key: "sandbox.allow_hosts",
			samples: samples{good: []string{"proxy.golang.org", "*.npmjs.org", "localhost", "10.0.0.7", "::1"},
				bad:  []string{"http://x.example/path", "https://example.com/", "example.com:8080", "*", "exa mple.com", "*.", "-x.example", "[::1]", "fe80::1%eth0"},
				wide: "evil.example"},
			widen: shrinksOnly("it lets commands reach a host the command line does not"),
			Help:  "let sandboxed commands reach `HOST` (or *.example.com) on ports 80 and 443, through ask's proxy (HTTP_PROXY); repeatable",
			check: hostPatterns,
			field: field(func(v *Values) *Setting[[]string] { return &v.AllowHosts })},
		// Widening: never widens: hidden paths add up (Adds).
		{Name: "sandbox-hide", Category: CategoryTools, ConfigOnly: true, Kind: List, Default: []string(nil), Key: "sandbox.hide", Adds: true,
			Help:  "hide the file or directory `PATH` from sandboxed commands too, besides the credential stores; repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.SandboxHide })},
		// Widening: an allow list: only shrinks.
		{Name: "sandbox-env", Category: CategoryTools, ConfigOnly: true, Kind: List, Default: []string(nil), Key: "sandbox.env",
			samples: samples{good: []string{"GOFLAGS"}, wide: "AWS_SECRET_ACCESS_KEY"},
			widen:   shrinksOnly("it passes a variable on to commands that the command line does not"),
			Help:    "under --safe, pass the environment variable `NAME` on to commands too (they get only what a build needs); repeatable",
			field:   field(func(v *Values) *Setting[[]string] { return &v.SandboxEnv })},
		// Widening: a limit (0 is 1024): only lowered.
		{Name: "sandbox-max-processes", Category: CategoryTools, ConfigOnly: true, Kind: Int, Default: 0, Key: "sandbox.max_processes",
			samples: samples{wide: "0", over: "100"},
			widen:   lowersOnly(processes),
			Help:    "the most processes and threads one sandboxed command may have at once (0: 1024)",
			check:   atLeast(0, "must be 0 (the default) or more"),
			field:   field(func(v *Values) *Setting[int] { return &v.SandboxMaxProcesses })},
		// Widening: a limit (none given is 2G): only lowered.
		{Name: "sandbox-scratch-size", Category: CategoryTools, ConfigOnly: true, Kind: String, Default: "", Key: "sandbox.scratch_size",
			samples: samples{good: []string{"512M"}, bad: []string{"lots"}, wide: "4G", over: "1G"},
			widen:   lowersOnly(scratchBytes),
			Help:    "the sandbox's scratch space for the whole run, a `SIZE` such as 512M or 2G (default 2G)",
			check:   byteSize,
			field:   field(func(v *Values) *Setting[string] { return &v.SandboxScratchSize })},
		// Widening: only its true value narrows.
		{Name: "sandbox-mcp", Category: CategoryTools, Kind: Bool, Default: false,
			samples: samples{wide: "false", over: "true"},
			widen:   switchWidens(false, "it starts MCP servers outside the sandbox"),
			Help:    "start the MCP servers' commands inside the sandbox too (a remote server is reached by ask itself, never sandboxed)",
			field:   field(func(v *Values) *Setting[bool] { return &v.SandboxMCP })},
		// Widening: a hook may deny calls.
		{Name: "no-hooks", Category: CategoryTools, Kind: Bool, Default: false,
			widen: switchWidens(true, "it skips hooks, which may deny calls"),
			Help:  "run none of the config file's hooks (a hook may deny calls, so this is no flag for after the prompt)",
			field: field(func(v *Values) *Setting[bool] { return &v.NoHooks })},
		// Widening: only its true value narrows.
		{Name: "no-tools", Category: CategoryTools, Kind: Bool, Default: false,
			samples: samples{wide: "false", over: "true"},
			widen:   switchWidens(false, "it offers tools the command line took away"),
			Help:    "offer the model no tools",
			field:   field(func(v *Values) *Setting[bool] { return &v.NoTools })},
		// Widening: only its true value narrows.
		{Name: "no-mcp", Category: CategoryTools, Key: "no_mcp", Kind: Bool, Default: false,
			samples: samples{wide: "false", over: "true"},
			widen:   switchWidens(false, "it starts MCP servers the command line turned off"),
			Help:    "start no MCP server: neither the config file's mcpServers nor --mcp",
			field:   field(func(v *Values) *Setting[bool] { return &v.NoMCP })},
		// Widening: a header may carry a variable's value out.
		{Name: "mcp-header", Category: CategoryTools, Kind: List, Default: []string(nil),
			samples: samples{good: []string{"X-Trace: 1"}, wide: "Authorization: Bearer ${TOKEN}"},
			widen:   shrinksOnly("it sends a header, with variables read from the environment, that the command line does not"),
			Help:    "send the header `'NAME: VALUE'` to every --mcp URL; ${VAR} in VALUE is read from the environment, and a credential must come that way ('Authorization: Bearer ${TOKEN}'); repeatable",
			field:   field(func(v *Values) *Setting[[]string] { return &v.MCPHeaders })},
		// Widening: leaving the command line's worktree out works in the
		// person's own checkout.
		{Name: "worktree", Category: CategoryTools, Kind: String, Default: "", Bare: worktree.Auto,
			samples: samples{good: []string{"fix-1", "auto"}, bad: []string{"../x", "a..b"}, wide: "other", over: "fix-1"},
			widen:   keepsWorktree,
			Help:    "work in a new git worktree .git/ask-worktrees/`NAME` on branch ask/NAME, given as --worktree=NAME (bare: a fresh name); kept only when the run changed it",
			check:   worktreeName,
			field:   field(func(v *Values) *Setting[string] { return &v.Worktree })},
		// Widening: never widens: where the worktree starts from.
		{Name: "worktree-base", Category: CategoryTools, Kind: String, Default: "",
			samples: samples{good: []string{"main"}},
			Help:    "make the --worktree from `REF` instead of HEAD",
			field:   field(func(v *Values) *Setting[string] { return &v.WorktreeBase })},
		// Skills and subagents (DESIGN §9). Widening: never widens: a skill's
		// allowed-tools only narrow the run.
		{Name: "skill", Category: CategoryPrompt, Kind: List, Default: []string(nil),
			Help:  "load the skill `NAME` before the first request, as if the model had called the skill tool; repeatable",
			field: field(func(v *Values) *Setting[[]string] { return &v.Skills })},
		// Widening: never widens: skills add instructions, never a permission.
		{Name: "no-skills", Category: CategoryPrompt, Key: "no_skills", Kind: Bool, Default: false,
			Help:  "find no skills: no list in the system prompt, no skill tool",
			field: field(func(v *Values) *Setting[bool] { return &v.NoSkills })},
		// Widening: a limit: only lowered.
		{Name: "max-agents", Category: CategoryLimits, Key: "max_agents", Kind: Int, Default: DefaultMaxAgents,
			samples: samples{wide: "8", over: "2"},
			widen:   lowersOnly(amount),
			Help:    "run at most `N` subagents (the agent tool's child runs) at once",
			check:   atLeast(1, "must be at least 1 (--no-agents offers no agent tool)"),
			field:   field(func(v *Values) *Setting[int] { return &v.MaxAgents })},
		// Widening: only its true value narrows.
		{Name: "no-agents", Category: CategoryTools, Key: "no_agents", Kind: Bool, Default: false,
			samples: samples{wide: "false", over: "true"},
			widen:   switchWidens(false, "it offers the agent tool the command line took away"),
			Help:    "offer no agent tool: the model starts no subagents",
			field:   field(func(v *Values) *Setting[bool] { return &v.NoAgents })},
		// Widening: the file tools reach what it holds.
		{Name: "workdir", Category: CategoryTools, Kind: String, Default: ".",
			samples: samples{good: []string{"sub"}, wide: "/"},
			paths:   true,
			widen:   insideWorkdir("it works outside the command line's working directory"),
			Help:    "the directory the tools work in; file tools never reach outside it",
			field:   field(func(v *Values) *Setting[string] { return &v.Workdir })},
		// Widening: a schema file outside the working directory would go to the model.
		{Name: "schema", Category: CategoryPrompt, Kind: String, Default: "",
			Recorded: true,
			samples:  samples{good: []string{`{"type":"object"}`, "schema.json"}, wide: "/etc/schema.json"},
			paths:    true,
			widen:    schemaInside,
			Help:     "answer with JSON matching this JSON Schema: a `FILE`, or the schema itself when it starts with {",
			field:    field(func(v *Values) *Setting[string] { return &v.Schema })},

		// Flags about this invocation only.
		// Widening: a profile may give any setting.
		{Name: "profile", Category: CategoryOutput, Env: "ASK_PROFILE", Kind: String,
			samples: samples{wide: "ci"},
			widen:   always("it chooses settings of the config file, which may widen"),
			Help:    "use profile `NAME` of the config file over its top-level settings (default: $ASK_PROFILE)"},
		// Widening: it acts on a file in agent mode.
		{Name: "plan", Category: CategoryPrompt, Kind: String, widen: always("it carries out a plan in agent mode"),
			samples: samples{wide: "plan.md"},
			Help:    "carry out the plan saved in `FILE` (with --mode agent)"},
		// Widening: never widens: output.
		{Name: "json", Category: CategoryOutput, Kind: Bool,
			Help: "print one JSON object with the answer, status, steps, tool calls and usage"},
		// Widening: never widens: output.
		{Name: "events", Category: CategoryOutput, Kind: Bool, Help: "print every event as a JSON line as it happens"},
		// Widening: a file name that spells a flag must not be overwritten.
		{Name: "transcript", Category: CategoryOutput, Kind: String, widen: always("it writes a file"),
			samples: samples{wide: "t.jsonl"},
			Help:    "write every event to `FILE` as JSON lines"},
		// Widening: never widens: output.
		{Name: "quiet", Category: CategoryOutput, Short: "q", Kind: Bool, Help: "print only errors on stderr"},
		// Widening: never widens: output.
		{Name: "verbose", Category: CategoryOutput, Short: "v", Kind: Bool, Help: "describe each request, retry and tool call on stderr"},
		// Widening: the conversation brings its provider and tools.
		{Name: "continue", Category: CategoryPrompt, Short: "c", Kind: Bool,
			widen: switchWidens(true, "it carries on a conversation with its tools"),
			Help:  "carry on the conversation of the last run in this directory (--workdir), with its provider, model, mode and tools unless flags say otherwise"},
		// Widening: the conversation brings its provider and tools.
		{Name: "resume", Category: CategoryPrompt, Kind: String, widen: always("it carries on a conversation with its tools"),
			samples: samples{wide: "run.jsonl"},
			Help:    "carry on the conversation of the transcript `FILE`, or of a kept run's ID (see ask log)"},
		// Widening: never widens: it only reads less.
		{Name: "no-stdin", Category: CategoryPrompt, Kind: Bool, Help: "never read stdin (in a while-read loop, or when stdin stays open)"},
		// Widening: never widens: a limit on what is read.
		{Name: "max-stdin", Category: CategoryPrompt, Kind: String, Default: DefaultMaxStdin,
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

// hostPatterns checks --allow-host values: NAME or *.NAME, or a literal
// IP address; a URL, a port, a bare * or a word that is no host name is
// refused with the form.
func hostPatterns(v any) string {
	for _, h := range v.([]string) {
		if !HostPattern(h) {
			return fmt.Sprintf("%q: give a host name, NAME or *.NAME, such as proxy.golang.org or *.npmjs.org (no scheme, port, path or bare *), or an IP address", h)
		}
	}
	return ""
}

// HostPattern reports whether h is an --allow-host value: a host name, *.
// and a host name, or a literal IP address.
func HostPattern(h string) bool {
	if ip, err := netip.ParseAddr(h); err == nil {
		return ip.Zone() == ""
	}
	name := strings.TrimPrefix(h, "*.")
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}

// toolPatterns checks --allow-tool and --deny-tool's NAME or
// NAME:ARG-PREFIX* patterns.
func toolPatterns(v any) string {
	if _, err := policy.ParsePatterns(v.([]string)); err != nil {
		return err.Error()
	}
	return ""
}

// baseURL checks that a request could be sent to the URL. The URL is left
// out of the message: it may hold a password.
func baseURL(v any) string {
	s, _ := v.(string)
	if s == "" {
		return "" // a local program has none
	}
	u, err := url.Parse(s)
	why := ""
	switch {
	case err != nil:
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		why = err.Error()
	case u.Scheme != "http" && u.Scheme != "https":
		why = fmt.Sprintf("the scheme is %q, not http or https", u.Scheme)
	case u.Host == "":
		why = "it names no host"
	default:
		return ""
	}
	return "is not a usable base URL: " + why + "; give one such as https://api.example.com/v1"
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

// worktreeName checks a --worktree name: one that cannot escape the
// worktrees' directory and makes a branch name.
func worktreeName(v any) string {
	name, _ := v.(string)
	if name == "" || name == worktree.Auto {
		return ""
	}
	if why := worktree.CheckName(name); why != "" {
		return fmt.Sprintf("%q %s", name, why)
	}
	return ""
}

// keepsWorktree is --worktree's mark: a lower layer may choose a worktree
// where the command line has none, or name the fresh one the command line
// asked for; it may not take the command line's away (the run would work
// in the checkout itself) or trade a named one for another.
func keepsWorktree(v, upper any) string {
	name, _ := v.(string)
	up, _ := upper.(string)
	switch {
	case name == "" && (up != "" || upper == nil):
		return "it works in the checkout itself, not in the command line's worktree"
	case name != "" && up != "" && up != worktree.Auto && name != up:
		return fmt.Sprintf("it names another worktree than the command line's %q", up)
	}
	return ""
}
