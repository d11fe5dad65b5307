package run

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// Setting is one setting's value and where it came from (see package
// settings, which declares every setting once).
type Setting[T any] = settings.Setting[T]

// Given makes a setting given by source.
func Given[T any](value T, source string) Setting[T] { return settings.Given(value, source) }

// Values of --tool-protocol.
const (
	ToolProtocolAuto     = "auto"
	ToolProtocolNative   = "native"
	ToolProtocolJSON     = "json"
	ToolProtocolMarkdown = "markdown"
)

// DefaultRetries is how many times a failed request is tried again.
const DefaultRetries = settings.DefaultRetries

// Settings are everything a run is asked to do, each with its source.
// Resolve makes them from the layers; a transcript gives them to replay.
// The settings the rows of package settings declare are its Values; the
// rest are resolved from them.
type Settings struct {
	settings.Values
	Profile Setting[string]
	// Key is the provider's key; its Source names the variable or the
	// config file. Secret never prints its value.
	Key Setting[config.Secret]
	// KeyVars are the variables the key is read from, for the error that
	// asks for one.
	KeyVars []string
	// MCPServers are the config file's mcpServers that are not disabled.
	MCPServers Setting[[]mcp.Server]
	// Hooks are the config file's hooks (its top level's: never a
	// profile's, never the repository's).
	Hooks Setting[hooks.Config]
	// Prices are the config file's model prices, for --max-budget-usd.
	Prices Setting[map[string]config.Price]
	// Aliases are the config file's short names for models, which
	// --model resolves; shown by `ask config`.
	Aliases Setting[map[string]string]

	// Conversation is the earlier run carried on (--continue, --resume),
	// nil for none.
	Conversation *Conversation

	// Credentials are the config file's providers' key variables and
	// keys, every provider's and not only the running one's: kept from the
	// tools' processes and scrubbed from what tools return.
	Credentials Credentials

	// child is set for a subagent's run: its parent, and its definition's
	// tools.
	child *child

	// keyFile is the config file the key came from, "" when it came from
	// the environment: such a file should be private.
	keyFile string
}

// defaults are the built-in layer.
func defaults() Settings {
	return Settings{Values: settings.Defaults(), MCPServers: Given([]mcp.Server(nil), "default")}
}

// cover lays hi over s in place, as a lower layer under a higher one:
// each setting hi gives wins (deny rules add up), and what is not a
// setting (the key, the credentials, the subagent) is hi's. The
// provider-bound settings (model, base URL, key) are resolved separately,
// once the provider is known. In place, since a Settings is 2 KB: copies
// of it, made layer by layer, grew a run's stack past 32 KB.
func (s *Settings) cover(hi *Settings) {
	s.Values.Cover(&hi.Values)
	s.Profile = hi.Profile.Or(s.Profile)
	s.MCPServers = hi.MCPServers.Or(s.MCPServers)
	s.Hooks = hi.Hooks.Or(s.Hooks)
	s.Prices = hi.Prices.Or(s.Prices)
	if hi.Conversation != nil {
		s.Conversation = hi.Conversation
	}
	s.Key, s.KeyVars, s.Aliases, s.Credentials = hi.Key, hi.KeyVars, hi.Aliases, hi.Credentials
	s.child, s.keyFile = hi.child, hi.keyFile
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
	// Paused: Resume names a deferred run for ask resume to carry on.
	Paused bool
	Getenv func(string) string
	Config *Config
	Wd     string
}

// Defaults are the settings that apply to a flag not typed, for --help
// to show; with a config file that cannot be read, the built-in defaults
// (the error is reported by the commands that need settings).
func Defaults(in Inputs) Settings {
	s, err := Resolve(in)
	if err != nil {
		s, _ = Resolve(Inputs{})
	}
	return s
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
	// The layers are laid from the bottom up, each over those below it.
	s := defaults()
	if err := cfg.coverWithFile(&s); err != nil {
		return Settings{}, err
	}
	carried := Settings{}
	conv, err := readConversation(in)
	if err != nil {
		return Settings{}, err
	}
	if conv != nil {
		if carried, err = conv.layer(in.Flags); err != nil {
			return Settings{}, err
		}
	}
	if err := s.coverWithEnv(in.Getenv); err != nil {
		return Settings{}, err
	}
	carried.Mode = narrowCarriedMode(carried.Mode, s.Mode)
	s.cover(&carried)
	s.cover(&in.Flags)
	if s.MaxSteps.Source == "default" {
		s.MaxSteps = Given(policy.DefaultMaxSteps(s.Mode.Value), "default (mode "+s.Mode.Value+")")
	}
	s.Profile = cfg.Profile
	if !s.Profile.IsGiven() {
		s.Profile = Given("", "default")
	}

	prov, err := chooseProvider(s.Provider, cfg, in.Getenv)
	if err != nil {
		return Settings{}, err
	}
	s.Provider = prov
	// The local fallback, tried because no key is set, is not retried: a
	// missing key is what the user must hear about, at once.
	if prov.Source == noKeySource && s.Retries.Source == "default" {
		s.Retries = Given(0, "default: no retries against the fallback tried for want of a key")
	}
	row, err := cfg.provider(prov.Value)
	if err != nil {
		return Settings{}, err
	}
	// A local program gets a model name only when the user names one: it
	// is passed on as $ASK_MODEL, which the program may not expect.
	if !row.LocalProgram {
		s.Model = s.Model.Or(cfg.model(row.Name)).Or(Given(row.DefaultModel, "default"))
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
	for name, p := range cfg.Resolved.Providers {
		if p.KeyEnv != "" {
			s.Credentials.Vars = append(s.Credentials.Vars, p.KeyEnv)
		}
		if k, _ := cfg.apiKey(name); k != "" {
			s.Credentials.Values = append(s.Credentials.Values, k.Reveal())
		}
	}
	if c := s.Conversation; c != nil {
		// Held settings this run has anyway need no one's word.
		if c.held.BaseURL == s.BaseURL.Value {
			c.held.BaseURL = ""
		}
		if c.held.ToolsFile == AbsPath(in.Wd, s.ToolsFile.Value) {
			c.held.ToolsFile = ""
		}
		if slices.Equal(c.held.MCP, s.MCP.Value) {
			c.held.MCP = nil
		}
	}
	return s, nil
}

// narrowCarriedMode is the mode a transcript carries, left out when it is
// less strict than the one the config file (or the defaults) gives: a
// transcript is a lower layer (DESIGN §1), which may narrow the mode but
// never lift the config's; a flag still gives any mode.
func narrowCarriedMode(carried, below Setting[string]) Setting[string] {
	row, _ := settings.Lookup("mode")
	if carried.IsGiven() && row.WidensOver(carried.Value, below.Value) != "" {
		return Setting[string]{}
	}
	return carried
}

// coverWithEnv lays over s what the environment says: each row's
// variable, through the row's Parse.
func (s *Settings) coverWithEnv(getenv func(string) string) error {
	var env Settings
	for _, r := range settings.Rows() {
		if r.Env == "" || !r.IsSetting() {
			continue
		}
		value := strings.TrimSpace(getenv(r.Env))
		if value == "" {
			continue
		}
		v, err := r.Parse(value)
		if err != nil {
			return fault.Usagef("%s %v", r.Env, err)
		}
		env.Values.Set(r.Name, v, "env "+r.Env)
	}
	s.cover(&env)
	return nil
}

// chooseProvider checks a provider named by a layer, or picks the first
// whose key is set, else the catalog's default, Ollama on localhost (DESIGN §3).
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
	return Given(catalog.Default().Name, noKeySource), nil
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
type Entry = settings.Entry

// entry is an Entry from its fields in order (vet asks for names in a
// literal of another package's type).
func entry(name string, value any, source string) Entry {
	return Entry{Name: name, Value: value, Source: source}
}

// Entries lists the settings a config file or the environment can give,
// in the rows' order, with the key (only as set or unset), the profile,
// the config file's MCP servers and aliases.
func (s Settings) Entries() []Entry {
	key := "unset"
	if s.Key.Value != "" {
		key = "set"
	}
	out := []Entry{entry("profile", nilIfEmpty(s.Profile.Value), s.Profile.Source)}
	for _, r := range settings.Rows() {
		// The colour is cmd/ask's, which weighs NO_COLOR too.
		if !r.IsSetting() || r.Key == "" && r.Env == "" || r.Name == "color" {
			continue
		}
		v, src, _ := s.Values.Get(r.Name)
		e := entry(r.Name, shown(v), src)
		switch r.Name {
		case "model":
			if !s.Model.IsGiven() {
				e.Source = "none: name one with --model"
			}
		case "base-url":
			e.Value = nilIfEmpty(providers.RedactURL(s.BaseURL.Value))
		case "temperature":
			if !s.Temperature.IsGiven() {
				e = entry("temperature", nil, "default: the provider's own")
			}
		case "max-steps":
			e = s.stepLimit()
		}
		out = append(out, e)
		if r.Name == "base-url" {
			out = append(out, entry("key", key, s.Key.Source))
		}
	}
	return append(out,
		entry("mcp-servers", list(mcpNames(s.MCPServers.Value)), s.MCPServers.Source),
		entry("hooks", list(hookLines(s.Hooks.Value)), cmp.Or(s.Hooks.Source, "none: name them under hooks in the config file")),
		entry("aliases", aliasValue(s.Aliases.Value), cmp.Or(s.Aliases.Source, "none: name them under aliases in the config file")),
	)
}

// shown is a value as `ask config` prints it: a duration as "5m0s", no
// value as nil, no list as an empty one.
func shown(v any) any {
	switch v := v.(type) {
	case time.Duration:
		return v.String()
	case string:
		return nilIfEmpty(v)
	case []string:
		return list(v)
	}
	return v
}

// hookLines are the hooks as `ask config` lists them: "EVENT [MATCHER]:
// COMMAND", by event.
func hookLines(c hooks.Config) []string {
	var out []string
	for _, event := range hooks.Events {
		for _, g := range c[event] {
			for _, h := range g.Hooks {
				m := ""
				if g.Matcher != "" {
					m = " " + g.Matcher
				}
				out = append(out, fmt.Sprintf("%s%s: %s", event, m, h.Command))
			}
		}
	}
	return out
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
		return entry("max-steps", policy.AskModeMaxSteps, fmt.Sprintf("mode ask (%s, from %s, is more than it allows)", termtext.Plural(s.MaxSteps.Value, "step", "steps"), s.MaxSteps.Source))
	}
	return entry("max-steps", s.MaxSteps.Value, s.MaxSteps.Source)
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
