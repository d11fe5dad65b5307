package run

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// Setting is one setting's value and where it came from: "flag --NAME",
// "conversation --continue", "env VAR", "config FILE[:PROFILE]" or
// "default". A setting that no layer gave has no Source.
type Setting[T any] struct {
	Value  T
	Source string
}

// Given makes a setting given by source.
func Given[T any](value T, source string) Setting[T] {
	return Setting[T]{Value: value, Source: source}
}

// IsGiven reports whether a layer gave the setting.
func (s Setting[T]) IsGiven() bool { return s.Source != "" }

// or is s when it was given, else lower.
func (s Setting[T]) or(lower Setting[T]) Setting[T] {
	if s.IsGiven() {
		return s
	}
	return lower
}

// Values of --tool-protocol.
const (
	ToolProtocolAuto     = "auto"
	ToolProtocolNative   = "native"
	ToolProtocolJSON     = "json"
	ToolProtocolMarkdown = "markdown"
)

// DefaultRetries is how many times a failed request is tried again.
const DefaultRetries = 2

// Settings are everything a run is asked to do, each with its source.
// Resolve makes them from the layers; a transcript gives them to replay.
type Settings struct {
	Profile  Setting[string]
	Provider Setting[string]
	Model    Setting[string]
	BaseURL  Setting[string]
	// Key is the provider's key; its Source names the variable or the
	// config file. Secret never prints its value.
	Key Setting[config.Secret]
	// KeyVars are the variables the key is read from, for the error that
	// asks for one.
	KeyVars []string
	// Command is the program of a local-program provider (--command).
	Command      Setting[string]
	Mode         Setting[string]
	Safe         Setting[bool]
	MaxSteps     Setting[int]
	Timeout      Setting[time.Duration]
	ToolProtocol Setting[string]
	NoStream     Setting[bool]
	Retries      Setting[int]
	MaxTokens    Setting[int]
	// Temperature is --temperature; not given, the provider's own.
	Temperature Setting[float64]
	// Reasoning is --reasoning: low, medium or high, or "" for the
	// model's own.
	Reasoning Setting[string]
	Allow     Setting[[]string]
	Deny      Setting[[]string]
	Yes       Setting[bool]
	ToolsFile Setting[string]
	MCP       Setting[[]string]
	// MCPHeaders are --mcp-header values, "Name: value", sent to every
	// --mcp URL; a value may name variables as ${NAME}. They are never
	// recorded: a continued run or a replay is given them again.
	MCPHeaders Setting[[]string]
	// MCPServers are the config file's mcpServers that are not disabled.
	MCPServers Setting[[]mcp.Server]
	NoTools    Setting[bool]
	Workdir    Setting[string]
	// Sandbox is --sandbox: off, workdir or read-only (--safe makes off
	// read-only). AllowNetwork keeps the network in the sandbox;
	// SandboxMCP puts the MCP servers in it too.
	Sandbox      Setting[string]
	AllowNetwork Setting[bool]
	SandboxMCP   Setting[bool]
	// System is appended to the default system prompt (-s).
	System Setting[string]
	// Schema is --schema: a file, or the schema itself when it starts
	// with "{".
	Schema Setting[string]
	// NoCache is --no-cache: requests do not ask the provider to cache
	// their prefix (no cache_control marks, no prompt_cache_key).
	NoCache Setting[bool]
	// NoProjectFile is --no-project-file: the system prompt leaves out
	// the project's AGENTS.md.
	NoProjectFile Setting[bool]
	// Attach are the files of -a/--attach, sent with the prompt.
	Attach Setting[[]string]
	// Aliases are the config file's short names for models, which
	// --model resolves; shown by `ask config`.
	Aliases Setting[map[string]string]

	// Conversation is the earlier run carried on (--continue, --resume),
	// nil for none.
	Conversation *Conversation

	// keyFile is the config file the key came from, "" when it came from
	// the environment: such a file should be private.
	keyFile string
}

// defaults are the built-in layer.
func defaults() Settings {
	const d = "default"
	return Settings{
		Mode:          Given(policy.ModeAgent, d),
		Safe:          Given(false, d),
		MaxSteps:      Given(loop.DefaultMaxSteps, d),
		Timeout:       Given(loop.DefaultTimeout, d),
		ToolProtocol:  Given(ToolProtocolAuto, d),
		NoStream:      Given(false, d),
		NoCache:       Given(false, d),
		Retries:       Given(DefaultRetries, d),
		MaxTokens:     Given(0, d),
		Reasoning:     Given("", d),
		Allow:         Given([]string(nil), d),
		Deny:          Given([]string(nil), d),
		Yes:           Given(false, d),
		ToolsFile:     Given("", d),
		MCP:           Given([]string(nil), d),
		MCPHeaders:    Given([]string(nil), d),
		MCPServers:    Given([]mcp.Server(nil), d),
		NoTools:       Given(false, d),
		Workdir:       Given(".", d),
		Sandbox:       Given(string(sandbox.Off), d),
		AllowNetwork:  Given(false, d),
		SandboxMCP:    Given(false, d),
		System:        Given("", d),
		Schema:        Given("", d),
		Command:       Given("", d),
		NoProjectFile: Given(false, d),
	}
}

// over lays hi over lo: each setting hi gives wins. The provider-bound
// settings (model, base URL, key) are resolved separately, once the
// provider is known.
func over(hi, lo Settings) Settings {
	out := hi
	out.Profile = hi.Profile.or(lo.Profile)
	out.Provider = hi.Provider.or(lo.Provider)
	out.Model = hi.Model.or(lo.Model)
	out.BaseURL = hi.BaseURL.or(lo.BaseURL)
	out.Command = hi.Command.or(lo.Command)
	out.Mode = hi.Mode.or(lo.Mode)
	out.Safe = hi.Safe.or(lo.Safe)
	out.MaxSteps = hi.MaxSteps.or(lo.MaxSteps)
	out.Timeout = hi.Timeout.or(lo.Timeout)
	out.ToolProtocol = hi.ToolProtocol.or(lo.ToolProtocol)
	out.NoStream = hi.NoStream.or(lo.NoStream)
	out.NoCache = hi.NoCache.or(lo.NoCache)
	out.Retries = hi.Retries.or(lo.Retries)
	out.MaxTokens = hi.MaxTokens.or(lo.MaxTokens)
	out.Temperature = hi.Temperature.or(lo.Temperature)
	out.Reasoning = hi.Reasoning.or(lo.Reasoning)
	out.Allow = hi.Allow.or(lo.Allow)
	out.Deny = hi.Deny.or(lo.Deny)
	out.Yes = hi.Yes.or(lo.Yes)
	out.ToolsFile = hi.ToolsFile.or(lo.ToolsFile)
	out.MCP = hi.MCP.or(lo.MCP)
	out.MCPHeaders = hi.MCPHeaders.or(lo.MCPHeaders)
	out.MCPServers = hi.MCPServers.or(lo.MCPServers)
	out.NoTools = hi.NoTools.or(lo.NoTools)
	out.Workdir = hi.Workdir.or(lo.Workdir)
	out.Sandbox = hi.Sandbox.or(lo.Sandbox)
	out.AllowNetwork = hi.AllowNetwork.or(lo.AllowNetwork)
	out.SandboxMCP = hi.SandboxMCP.or(lo.SandboxMCP)
	out.System = hi.System.or(lo.System)
	out.Schema = hi.Schema.or(lo.Schema)
	out.NoProjectFile = hi.NoProjectFile.or(lo.NoProjectFile)
	out.Attach = hi.Attach.or(lo.Attach)
	if out.Conversation == nil {
		out.Conversation = lo.Conversation
	}
	return out
}

// Inputs are the layers settings are resolved from, highest first: the
// typed flags, the conversation carried on, the environment, the config
// file (its profile over its top level), the defaults.
type Inputs struct {
	// Flags holds the flags the user typed; only those have a Source.
	Flags Settings
	// Continue and Resume name the conversation to carry on.
	Continue bool
	Resume   string
	Getenv   func(string) string
	Config   *Config
	Wd       string
}

// Resolve applies the layers. A broken config file, an unknown provider
// or an unreadable conversation is a usage error.
func Resolve(in Inputs) (Settings, error) {
	if in.Getenv == nil {
		in.Getenv = func(string) string { return "" }
	}
	cfg := in.Config
	if cfg == nil {
		cfg = emptyConfig()
	}
	if cfg.Err != nil {
		return Settings{}, asKind(Usage, cfg.Err)
	}
	fromFile, err := cfg.layer()
	if err != nil {
		return Settings{}, err
	}
	carried := Settings{}
	conv, err := readConversation(in)
	if err != nil {
		return Settings{}, err
	}
	if conv != nil {
		carried = conv.layer(in.Flags)
	}
	s := over(in.Flags, over(carried, over(envLayer(in.Getenv), over(fromFile, defaults()))))
	s.Profile = cfg.Profile
	if !s.Profile.IsGiven() {
		s.Profile = Given("", "default")
	}

	prov, err := chooseProvider(s.Provider, cfg, in.Getenv)
	if err != nil {
		return Settings{}, err
	}
	s.Provider = prov
	row, err := cfg.provider(prov.Value)
	if err != nil {
		return Settings{}, err
	}
	// A local program gets a model name only when the user names one: it
	// is passed on as $ASK_MODEL, which the program may not expect.
	if !row.LocalProgram {
		s.Model = s.Model.or(cfg.model(row.Name)).or(Given(row.DefaultModel, "default"))
	}
	if m, key := cfg.Resolved.Alias(s.Model.Value); m != "" {
		s.Model = Given(m, fmt.Sprintf("%s, alias %q in %s", s.Model.Source, s.Model.Value, cfg.source(key)))
	}
	if s.Model.Value == "" {
		s.Model = Setting[string]{}
	}
	s.Aliases = cfg.aliases()
	s.BaseURL = resolveBaseURL(s.BaseURL, row, cfg, in.Getenv)
	s.Key, s.KeyVars, s.keyFile = resolveKey(row, cfg, in.Getenv)
	if c := s.Conversation; c != nil {
		// Held settings this run has anyway need no one's word.
		if c.held.BaseURL == s.BaseURL.Value {
			c.held.BaseURL = ""
		}
		if c.held.ToolsFile == absPath(in.Wd, s.ToolsFile.Value) {
			c.held.ToolsFile = ""
		}
		if slices.Equal(c.held.MCP, s.MCP.Value) {
			c.held.MCP = nil
		}
	}
	return s, nil
}

// envLayer is what the environment says.
func envLayer(getenv func(string) string) Settings {
	var s Settings
	for _, v := range []struct {
		name string
		to   *Setting[string]
	}{
		{"ASK_PROVIDER", &s.Provider},
		{"ASK_MODEL", &s.Model},
		{"ASK_BASE_URL", &s.BaseURL},
		{"ASK_COMMAND", &s.Command},
	} {
		if value := strings.TrimSpace(getenv(v.name)); value != "" {
			*v.to = Given(value, "env "+v.name)
		}
	}
	return s
}

// chooseProvider checks a provider named by a layer, or picks the first
// whose key is set, else Ollama on localhost (DESIGN §3).
func chooseProvider(named Setting[string], cfg *Config, getenv func(string) string) (Setting[string], error) {
	if named.IsGiven() {
		if _, err := catalog.Lookup(named.Value); err != nil {
			if strings.Contains(strings.TrimSpace(named.Value), " ") {
				err = fmt.Errorf("%w (-p is --provider; the prompt takes no flag: ask %s)", err, shellQuote(named.Value))
			}
			return named, asKind(Usage, err)
		}
		return named, nil
	}
	for _, p := range catalog.All() {
		for _, v := range p.KeyEnv {
			if getenv(v) != "" {
				return Given(p.Name, "default: the first provider whose key is set ("+v+")"), nil
			}
		}
	}
	return Given("ollama", noKeySource), nil
}

// noKeySource is the source of the provider chosen when no key is set.
const noKeySource = "default: no key variable is set"

// KeyVariables are the variables that hold a provider's key, in the order
// the first set one chooses the provider.
func KeyVariables() []string {
	var out []string
	for _, p := range catalog.All() {
		if p.NeedsKey() {
			for _, v := range p.KeyEnv {
				if !slices.Contains(out, v) {
					out = append(out, v)
				}
			}
		}
	}
	return out
}

// resolveBaseURL applies --base-url (or a carried one), ASK_BASE_URL, the
// provider's own variable, the config file, the provider's default. A
// local program has none.
func resolveBaseURL(given Setting[string], row catalog.Provider, cfg *Config, getenv func(string) string) Setting[string] {
	if row.LocalProgram {
		return Setting[string]{Source: "not used by a local program"}
	}
	chosen := given
	for _, v := range row.BaseURLEnv {
		if !chosen.IsGiven() && getenv(v) != "" {
			chosen = Given(getenv(v), "env "+v)
		}
	}
	if !chosen.IsGiven() {
		chosen = cfg.baseURL(row.Name)
	}
	if !chosen.IsGiven() {
		chosen = Given(row.BaseURL, "default")
	}
	chosen.Value = row.ResolveBaseURL(chosen.Value, func(string) string { return "" })
	return chosen
}

// resolveKey finds the provider's key: its variables first, then the
// config file's api_key.
func resolveKey(row catalog.Provider, cfg *Config, getenv func(string) string) (key Setting[config.Secret], vars []string, file string) {
	vars = row.KeyEnv
	for _, v := range vars {
		if k := strings.TrimSpace(getenv(v)); k != "" {
			return Given(config.Secret(k), "env "+v), vars, ""
		}
	}
	if k, src := cfg.apiKey(row.Name); k != "" {
		return Given(k, src), vars, cfg.Path
	}
	if row.NeedsKey() {
		return Setting[config.Secret]{Source: "needed: set " + strings.Join(vars, " or ")}, vars, ""
	}
	return Setting[config.Secret]{Source: "not needed"}, vars, ""
}

// Entry is one setting as `ask config` shows it.
type Entry struct {
	Name   string
	Value  any // nil when there is none
	Source string
}

// Entries lists the settings a config file, the environment or a flag
// can give, in a fixed order, keys only as set or unset.
func (s Settings) Entries() []Entry {
	key := "unset"
	if s.Key.Value != "" {
		key = "set"
	}
	model := Entry{"model", nilIfEmpty(s.Model.Value), s.Model.Source}
	if !s.Model.IsGiven() {
		model.Source = "none: name one with --model"
	}
	temperature := Entry{"temperature", s.Temperature.Value, s.Temperature.Source}
	if !s.Temperature.IsGiven() {
		temperature = Entry{"temperature", nil, "default: the provider's own"}
	}
	return []Entry{
		{"profile", nilIfEmpty(s.Profile.Value), s.Profile.Source},
		{"provider", s.Provider.Value, s.Provider.Source},
		model,
		{"base-url", nilIfEmpty(providers.RedactURL(s.BaseURL.Value)), s.BaseURL.Source},
		{"key", key, s.Key.Source},
		{"mode", s.Mode.Value, s.Mode.Source},
		{"safe", s.Safe.Value, s.Safe.Source},
		s.stepLimit(),
		{"timeout", s.Timeout.Value.String(), s.Timeout.Source},
		{"tool-protocol", s.ToolProtocol.Value, s.ToolProtocol.Source},
		{"no-stream", s.NoStream.Value, s.NoStream.Source},
		{"no-cache", s.NoCache.Value, s.NoCache.Source},
		{"retries", s.Retries.Value, s.Retries.Source},
		{"max-tokens", s.MaxTokens.Value, s.MaxTokens.Source},
		temperature,
		{"reasoning", nilIfEmpty(s.Reasoning.Value), s.Reasoning.Source},
		{"allow-tool", list(s.Allow.Value), s.Allow.Source},
		{"deny-tool", list(s.Deny.Value), s.Deny.Source},
		{"yes", s.Yes.Value, s.Yes.Source},
		{"tools-file", nilIfEmpty(s.ToolsFile.Value), s.ToolsFile.Source},
		{"mcp", list(s.MCP.Value), s.MCP.Source},
		{"no-project-file", s.NoProjectFile.Value, s.NoProjectFile.Source},
		{"mcp-servers", list(mcpNames(s.MCPServers.Value)), s.MCPServers.Source},
		{"aliases", aliasValue(s.Aliases.Value), cmp.Or(s.Aliases.Source, "none: name them under aliases in the config file")},
	}
}

func aliasValue(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// stepLimit is the step limit a run of s has, with where it comes from:
// --mode ask allows at most policy.AskModeMaxSteps whatever --max-steps
// says.
func (s Settings) stepLimit() Entry {
	if s.Mode.Value == policy.ModeAsk && s.MaxSteps.Value > policy.AskModeMaxSteps {
		return Entry{"max-steps", policy.AskModeMaxSteps, fmt.Sprintf("mode ask (%s, from %s, is more than it allows)", termtext.Plural(s.MaxSteps.Value, "step", "steps"), s.MaxSteps.Source)}
	}
	return Entry{"max-steps", s.MaxSteps.Value, s.MaxSteps.Source}
}

// mcpNames are the names of the config file's enabled MCP servers.
func mcpNames(servers []mcp.Server) []string {
	var out []string
	for _, sp := range servers {
		out = append(out, sp.Name)
	}
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func list(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}
