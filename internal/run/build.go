// Package run is the one place a run of ask is assembled and executed:
// settings resolved once with their sources, the provider and its
// protocol, the tools and the policy over them, the system prompt, the
// conversation carried on, and the transcript from run.started to
// run.finished. The main command, `ask replay`, `ask provider request`
// and `ask tools` all build their run with New; the CLI only chooses where
// events go and how the result is shown.
package run

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/fault"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/prompts"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/skills"
	"github.com/ask-cli/ask/internal/suggest"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/tools"
)

// Env is the world a run is built in: the process's environment, and the
// seams through which a test or a replay puts its own world in place.
type Env struct {
	Getenv  func(string) string
	Environ func() []string
	HTTP    *http.Client
	Now     func() time.Time
	Wd      string
	Version string
	// IdleTimeout ends a stream that sends nothing for this long; 0 sets
	// no limit.
	IdleTimeout time.Duration
	// Prompter asks a person to approve calls; nil when nobody can be
	// asked, and gated calls are then denied.
	Prompter policy.Prompter
	// Notes receives what a person should know on the way (warnings, a
	// switch of tool protocol); nil drops it.
	Notes io.Writer
	// Verbose passes the MCP servers' stderr on to Notes.
	Verbose bool
	// MCPStarting is told the MCP servers the run is waiting for before
	// its first request, whenever that changes, and nil once it waits no
	// more; nil tells nobody.
	MCPStarting func(names []string)
	// PriceRate and Billing are how the provider bills the run's requests
	// when the way they are sent decides it, not the run's settings: a
	// batch engine's 0.5 and "batch". PriceRate 0 is the listed price.
	PriceRate float64
	Billing   string
	// Offline builds a run that will send nothing (`ask provider request`,
	// `ask tools`): no key is needed.
	Offline bool
	// Replay, when set, is the recorded world a replayed run meets instead
	// of the network, the person and, if asked, the tools.
	Replay *Replay
	// Private are files of ask's own besides its state and config (the
	// --transcript file), which the file tools must not reach.
	Private []string
	// Confirm puts a yes-or-no question to the person at the terminal;
	// nil when there is nobody to ask, which is a no.
	Confirm func(ctx context.Context, question string) bool
	// Ask puts a free-text question to the person at the terminal (an
	// MCP server's request for input); nil when there is nobody to ask,
	// and such requests are declined.
	Ask func(ctx context.Context, question string) (string, error)
	// SandboxCheck says what the kernel can confine; nil asks the kernel
	// (sandbox.Check).
	SandboxCheck func() sandbox.Support
	// ProxyResolve and ProxyDial resolve an allowed name and connect to
	// an address the --allow-host proxy checked; nil does as the system
	// does. Tests map names and addresses here.
	ProxyResolve func(ctx context.Context, host string) ([]netip.Addr, error)
	ProxyDial    func(ctx context.Context, network, addr string) (net.Conn, error)
	// Limiter paces the requests of every run of the process (ask batch);
	// nil paces none.
	Limiter providers.Limiter
	// Decisions, for ask resume, are the reviewer's answers about the
	// calls the deferred run waits on; the conversation must be that run
	// (Inputs.Paused).
	Decisions *Decisions
	// Editor is the editor that reads and writes the file tools' text
	// (ask acp), inside the working directory as ever; unset, the disk.
	Editor tools.EditorFiles
}

// Run is one assembled run, ready to execute. Close releases what it
// started (MCP servers, the terminal).
type Run struct {
	Settings Settings
	Provider catalog.Provider
	// ModelName is the model as recorded: the provider's model name, or
	// a local program's command line when no model is named.
	ModelName string
	BaseURL   string
	System    string
	// ProjectFile is the AGENTS.md the system prompt carries, "" for none.
	ProjectFile string
	// Declared are the tools offered to the model, in order.
	Declared []providers.Tool
	Mode     string
	MaxSteps int
	Timeout  time.Duration
	Stream   bool
	// Window is the model's input window in tokens, 0 when unknown
	// (DESIGN §9, Long runs).
	Window int

	// model owns the protocol (CurrentProtocol): the auto fallback may
	// switch it during the run, and everything renders with the current one.
	model   loop.Model
	caller  *providers.Caller // nil for a local program
	toolbox loop.Toolbox
	// toolSecrets hides the run's secrets in what the tools return.
	toolSecrets *providers.Redactor
	// registry is the tools behind toolbox, nil for none.
	registry *tools.Registry
	tools    map[string]tools.Info
	// mcpTools are the names of the MCP servers' tools among them.
	mcpTools map[string]bool
	gate     loop.Gate
	// hooks are the config file's, nil for none or under --no-hooks.
	hooks   *hooks.Runner
	schema  json.RawMessage
	workdir string
	// attachments are the files of -a, sent with the prompt.
	attachments []providers.Attachment
	root        *tools.Root  // where the file tools work; it reports their changes
	worktree    *runWorktree // --worktree's, nil without
	env         Env
	closers     []func()
	// network hears of the --allow-host proxy's connections.
	network networkHook
	// skills are those found, nil under --no-skills.
	skills *skillSet
	// family is the run's subagents: the agent tool's children, or, for a
	// child, its parent.
	family *family
}

// Close stops what the run started. It is safe to call more than once.
func (r *Run) Close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		r.closers[i]()
	}
	r.closers = nil
}

// New assembles a run from settings. It is the one constructor: a run of
// the main command, a replay (with Env.Replay), the first request `ask
// provider request` prints and the tools `ask tools` shows all come from
// here. On error nothing is left running.
func New(ctx context.Context, s Settings, env Env) (_ *Run, err error) {
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	if env.Now == nil {
		env.Now = time.Now
	}
	row, err := resolveProvider(ctx, &s, env)
	if err != nil {
		return nil, err
	}
	r := &Run{Settings: s, Provider: row, ModelName: s.Model.Value, BaseURL: s.BaseURL.Value, Mode: s.Mode.Value,
		MaxSteps: s.MaxSteps.Value, Timeout: s.Timeout.Value, Stream: !s.NoStream.Value && s.Tier.Value != providers.TierBackground, env: env}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	r.MaxSteps = s.stepLimit().Value.(int)
	r.Window = s.ContextWindow.Value
	proto, err := r.checkChoices()
	if err != nil {
		return nil, err
	}
	key, err := r.key()
	if err != nil {
		return nil, err
	}
	if r.attachments, err = r.loadAttachments(); err != nil {
		return nil, err
	}
	root, secrets, err := r.makeRoot(ctx, key)
	if err != nil {
		return nil, err
	}
	if err := r.loadTools(ctx, root, secrets); err != nil {
		return nil, err
	}
	if err := r.buildSystem(); err != nil {
		return nil, err
	}
	if row.LocalProgram {
		return r, r.useLocalProgram(proto)
	}
	return r, r.useCaller(ctx, proto, key)
}

// resolveProvider checks s and finds its provider's row; a conversation
// carried on is checked against it and takes its settings from the
// earlier run.
func resolveProvider(ctx context.Context, s *Settings, env Env) (catalog.Provider, error) {
	if err := s.check(); err != nil {
		return catalog.Provider{}, err
	}
	row, err := catalog.Lookup(s.Provider.Value)
	if err != nil {
		return catalog.Provider{}, asKind(Usage, err)
	}
	if s.KeyVars != nil {
		row.KeyEnv = s.KeyVars
	}
	if c := s.Conversation; c != nil {
		if err := c.checkProvider(row); err != nil {
			return catalog.Provider{}, err
		}
		s.carryOn(ctx, env)
	}
	if err := checkDecisions(*s, env); err != nil {
		return catalog.Provider{}, err
	}
	return row, nil
}

// checkChoices checks the model, its knobs, the tier and the budget, and
// returns the provider's protocol. They are checked before the key, the
// tools and the MCP servers: a flag to fix is reported first, and nothing
// is started for it.
func (r *Run) checkChoices() (providers.Protocol, error) {
	s, row := r.Settings, r.Provider
	if r.ModelName == "" && !row.LocalProgram {
		return nil, fault.Usagef("%s has no default model: name one with --model", row.Name)
	}
	proto, err := row.NewProtocol()
	if err != nil {
		return nil, err
	}
	if err := s.checkKnobs(row, proto, r.ModelName); err != nil {
		return nil, err
	}
	if s.Tier.Value != "" && r.env.Billing != "" {
		return nil, fault.Usagef("--tier %s (%s): these requests go through the %s engine, which has its own price; leave --tier out", s.Tier.Value, s.Tier.Source, r.env.Billing)
	}
	if err := r.checkBudget(); err != nil {
		return nil, err
	}
	return proto, nil
}

// makeRoot makes the directory the tools work in, --worktree's when
// asked, with what they must not see or inherit, and the sandbox their
// commands run in. It returns the root and the secrets the tools' output
// is scrubbed of.
func (r *Run) makeRoot(ctx context.Context, key string) (*tools.Root, []string, error) {
	s, env := r.Settings, r.env
	workdir, err := r.useWorktree(ctx, AbsPath(env.Wd, s.Workdir.Value))
	if err != nil {
		return nil, nil, err
	}
	root, err := tools.NewRoot(workdir)
	if err != nil {
		return nil, nil, fault.Usagef("--workdir: %v", err)
	}
	r.hideOwnFiles(root)
	r.workdir, r.root = root.Dir(), root
	root.Editor = env.Editor
	// Every credential the run can know of stays with ask: out of the
	// tools' environment, and scrubbed from what they return.
	secretVars, secrets := r.credentials(key)
	root.Scrub(secretVars...)
	if s.Safe.Value {
		// Under --safe, commands get what a build needs, and what the
		// config names.
		root.KeepOnly(s.SandboxEnv.Value...)
	}
	if root.Sandbox, err = r.sandbox(); err != nil {
		return nil, nil, err
	}
	return root, secrets, nil
}

// hideOwnFiles hides ask's own files from the tools: they steer later
// runs, so a model must not read or rewrite them, even with the working
// directory at $HOME.
func (r *Run) hideOwnFiles(root *tools.Root) {
	env := r.env
	if state := history.StateDir(env.Getenv); state != "" {
		root.Hide(state)
	}
	root.Hide(config.Path(env.Getenv))
	// The MCP tool cache says which tools later runs declare.
	if cache := MCPCacheDir(env.Getenv); cache != "" {
		root.Hide(cache)
	}
	for _, p := range env.Private {
		root.Hide(AbsPath(env.Wd, p))
	}
}

// loadTools finds the skills and the subagents, then builds the tools
// over root, whose results are scrubbed of secrets.
func (r *Run) loadTools(ctx context.Context, root *tools.Root, secrets []string) error {
	if err := r.findSkills(); err != nil {
		return err
	}
	r.findAgents()
	// Made before the tools: a token an MCP server's sign-in renews
	// mid-run joins it.
	r.toolSecrets = providers.NewRedactor(secrets...)
	if err := r.buildTools(ctx, root); err != nil {
		return err
	}
	r.toolbox = keyFilter{r.toolbox, r.toolSecrets}
	return nil
}

// buildSystem writes the system prompt, once the tools and the skills
// are known; a replay's is the one recorded.
func (r *Run) buildSystem() error {
	r.System = prompts.System(prompts.Env{
		Date: r.env.Now(), OS: runtime.GOOS, Workdir: r.workdir, Mode: r.Mode, Tools: len(r.Declared) > 0,
		Project: r.projectFile(),
	}, r.Settings.System.Value)
	_, offered := r.tools[skills.ToolName]
	r.System += r.skillPrompt(offered)
	if err := r.useSchema(); err != nil {
		return err
	}
	if r.env.Replay != nil {
		r.System = r.env.Replay.system
	}
	return nil
}

// useCaller makes the caller that sends the run's requests to the
// provider, a replay's recorded answers instead under Env.Replay.
func (r *Run) useCaller(ctx context.Context, proto providers.Protocol, key string) error {
	s, env := r.Settings, r.env
	caller := &providers.Caller{
		Provider: r.Provider.Name, Protocol: proto, BaseURL: r.BaseURL, Model: r.ModelName, Key: key,
		Header: r.Provider.Header, HTTP: env.HTTP, Retries: s.Retries.Value, IdleTimeout: env.IdleTimeout,
		Temperature: s.temperature(), Reasoning: s.Reasoning.Value, Tier: s.Tier.Value, Limiter: env.Limiter,
	}
	if s.Tier.Value == providers.TierFlex {
		caller.HTTP = flexClient(caller.HTTP)
	}
	if env.Replay != nil {
		caller.HTTP = &http.Client{Transport: env.Replay.transport}
		caller.Sleep = func(context.Context, time.Duration) error { return nil }
	}
	r.model, r.caller = caller, caller
	if r.Window == 0 && env.Replay == nil && !env.Offline {
		r.Window = r.listedWindow(ctx, caller)
	}
	return r.useToolProtocol(caller)
}

// projectFile finds the project's instructions for the system prompt,
// unless --no-project-file; a replay has its recorded prompt instead. One
// that cannot be read is said and left out: it is the project's advice,
// not something the run needs.
func (r *Run) projectFile() *prompts.Project {
	if r.Settings.NoProjectFile.Value || r.env.Replay != nil {
		return nil
	}
	p, err := prompts.FindProject(r.workdir)
	switch {
	case err != nil:
		r.note("warning: project instructions left out: %v", err)
		return nil
	case p == nil:
		if r.env.Verbose {
			r.note("project instructions: no %s from %s up to the repository root", prompts.ProjectFileName, r.workdir)
		}
		return nil
	}
	r.ProjectFile = p.Path
	if r.env.Verbose {
		if p.Cut() {
			r.note("project instructions: %s (%d bytes, cut to the first %d)", p.Path, p.Size, len(p.Text))
		} else {
			r.note("project instructions: %s (%d bytes)", p.Path, p.Size)
		}
	}
	return p
}

// check runs every setting through its row's Parse (the layers did as
// they read them; this catches settings a caller built by hand), and the
// base URL, which a provider's own variable or the config file may give.
func (s Settings) check() error {
	if err := s.Values.Check(); err != nil {
		return fault.Usagef("%v", err)
	}
	return checkBaseURL(s.BaseURL)
}

// checkBaseURL refuses a base URL that no request could be sent to, before
// one is tried, through the row's check. The URL itself is left out of
// the message: it may hold a password.
func checkBaseURL(base Setting[string]) error {
	if msg := baseURLRow().Check(base.Value); msg != "" {
		return fault.Usagef("%s %s", base.Source, msg)
	}
	return nil
}

// baseURLRow is --base-url's row.
func baseURLRow() settings.Row {
	r, _ := settings.Lookup("base-url")
	return r
}

// key is the provider's key, or an error naming the variable to set. A
// run that sends nothing, or sends it to a local program or a recording,
// needs none.
func (r *Run) key() (string, error) {
	s := r.Settings
	if s.Key.Value != "" {
		r.warnIfReadable()
		return s.Key.Value.Reveal(), nil
	}
	if r.env.Offline || r.env.Replay != nil || r.Provider.LocalProgram || !r.Provider.NeedsKey() {
		return "", nil
	}
	return "", &catalog.MissingKeyError{Provider: r.Provider.Name, Vars: r.Provider.KeyEnv}
}

// warnIfReadable warns, as ssh does, when a file holding a key can be read
// by others.
func (r *Run) warnIfReadable() {
	file := r.Settings.keyFile
	if file == "" || r.env.Notes == nil {
		return
	}
	if info, err := os.Stat(file); err == nil && info.Mode().Perm()&0o077 != 0 {
		fmt.Fprintf(r.env.Notes, "ask: warning: %s holds an API key and others can read it: chmod 600 %s\n", file, file)
	}
}

// buildTools loads the tools the run offers and the policy over them: the
// built-ins, then a tools file's and the MCP servers', filtered by the mode
// and the deny rules, and narrowed to the earlier run's when a conversation
// is carried on with its tools.
func (r *Run) buildTools(ctx context.Context, root *tools.Root) error {
	s := r.Settings
	if rp := r.env.Replay; rp != nil {
		return rp.buildTools(ctx, r, root)
	}
	var all []tools.Tool
	if !s.NoTools.Value {
		all = tools.Builtins(root)
		extra, err := r.loadExtraTools(ctx, root, all, AbsPath(r.env.Wd, s.ToolsFile.Value), s.MCP.Value)
		if err != nil {
			return err
		}
		all = append(all, extra...)
		all = r.addOwnTools(all, append(r.skillTool(), r.agentTool()...))
	}
	allow, deny := s.ToolRules()
	pol := policy.New(r.Mode, s.Safe.Value, s.Yes.Value, allow, deny, r.env.Prompter, all)
	pol.AcceptEdits = s.AcceptEdits.Value
	pol.Defer, _ = policy.ParsePatterns(s.DeferTools.Value)
	pol.DeferUndecided = s.OnApproval.Value == "defer"
	r.warnUnmatchedRules(pol, allow, deny, pol.Defer)
	pol.NoSandbox = root.Sandbox.Problem()
	r.useHooks(pol, root)
	r.warnIdleMaxRounds()
	var gate loop.Gate = pol
	if d := r.env.Decisions; d != nil {
		gate = d.resolving(pol)
	}
	offered := pol.Declared(all)
	if c := s.Conversation; c != nil && c.KeepTools && len(c.Tools) > 0 {
		// A tool that is not offered must not run either: a call to it is
		// answered as a call to an unknown tool.
		offered = slices.DeleteFunc(offered, func(t tools.Tool) bool { return !slices.Contains(c.Tools, t.Info().Name) })
	}
	if c := s.child; c != nil && c.within != nil {
		// A subagent is offered only its definition's tools.
		offered = slices.DeleteFunc(offered, func(t tools.Tool) bool { return !c.within.names(t.Info().Name) })
	}
	registry, err := tools.NewRegistry(offered...)
	if err != nil {
		return err
	}
	r.useTools(registry, gate, pol)
	r.gate = narrowGate{inner: r.gate, lists: r.narrowings}
	return nil
}

// warnUnmatchedRules warns of each rule given on the command line whose
// tool name matches no tool the run has: a misspelt name (--deny-tool shel)
// would deny, or allow, nothing. Rules from the config file are not
// checked: they may name the tools of MCP servers that only some
// directories' runs start.
func (r *Run) warnUnmatchedRules(pol *policy.Policy, allow, deny, deferred []policy.Pattern) {
	s := r.Settings
	if s.NoTools.Value {
		return
	}
	for _, rules := range []struct {
		flag, verb, source string
		patterns           []policy.Pattern
	}{{"--allow-tool", "allows", s.Allow.Source, allow}, {"--deny-tool", "denies", s.Deny.Source, deny},
		{"--defer-tool", "defers", s.DeferTools.Source, deferred}} {
		if !strings.HasPrefix(rules.source, "flag ") {
			continue
		}
		for _, p := range pol.Unmatched(rules.patterns) {
			hint := ""
			if near := suggest.Nearest(p.Name(), pol.ToolNames(), 2); near != "" {
				hint = fmt.Sprintf(" (did you mean %q?)", near)
			}
			if ask := hooks.AskName(p.Name()); ask != "" {
				// Claude Code's name for one of ask's tools (bash:git*).
				hint = fmt.Sprintf(" (ask calls Claude Code's %s %q: %s)", p.Name(), ask, strings.Replace(p.String(), p.Name(), ask, 1))
			}
			r.note("warning: %s %q matches no tool of this run, so it %s nothing%s", rules.flag, p.String(), rules.verb, hint)
		}
	}
}

// warnIdleMaxRounds warns of a --max-rounds given on the command line to a
// run with nothing it bounds: no --until check and no Stop hook. A
// warning, not a usage error: the same flag in a script or an alias is
// harmless on a run without a check, and the run does what was asked;
// but a silent no-op hides a forgotten --until.
func (r *Run) warnIdleMaxRounds() {
	s := r.Settings
	if strings.HasPrefix(s.MaxRounds.Source, "flag ") && s.Until.Value == "" && !r.hooks.Has(hooks.Stop) {
		r.note("warning: --max-rounds bounds --until's checks and the Stop hooks' rounds, and this run has neither, so it does nothing here")
	}
}

// useTools makes a registry the run's tools and gate the policy.
func (r *Run) useTools(registry *tools.Registry, gate loop.Gate, pol *policy.Policy) {
	r.toolbox, r.gate, r.registry = registry, gate, registry
	r.tools = map[string]tools.Info{}
	r.Declared = nil
	r.mcpTools = map[string]bool{}
	for _, t := range registry.List() {
		info := t.Info()
		// What this run does with a call: under --safe, shell runs in
		// the read-only sandbox without asking.
		info.RequiresApproval = pol.Asks(info)
		r.tools[info.Name] = info
		if _, remote := t.(interface{ RemoteName() string }); remote {
			r.mcpTools[info.Name] = true
		}
		r.Declared = append(r.Declared, providers.Tool{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
	}
}

// Tool describes a declared tool, with its risk and approval when the run
// knows them.
func (r *Run) Tool(name string) (tools.Info, bool) {
	for _, t := range r.Declared {
		if t.Name != name {
			continue
		}
		if info, ok := r.tools[name]; ok {
			return info, true
		}
		return tools.Info{Name: t.Name, Description: t.Description, Parameters: t.Parameters}, true
	}
	return tools.Info{}, false
}

// DeclaredInfo describes each declared tool, in order, as Tool does.
func (r *Run) DeclaredInfo() []tools.Info {
	var out []tools.Info
	for _, t := range r.Declared {
		info, _ := r.Tool(t.Name)
		out = append(out, info)
	}
	return out
}

// ToolDeclaration is the declared tool name as `ask tools show` prints
// it, its parameters an empty object when it takes none. A tool the run
// does not declare is a usage error naming those it does.
func (r *Run) ToolDeclaration(name string) (tools.Info, error) {
	if info, ok := r.Tool(name); ok {
		if len(info.Parameters) == 0 {
			info.Parameters = providers.EmptyParameters
		}
		return info, nil
	}
	if len(r.Declared) == 0 {
		return tools.Info{}, fault.Usagef("no tool %q: no tools are offered in mode %s with these flags", name, r.Mode)
	}
	var names []string
	for _, t := range r.Declared {
		names = append(names, t.Name)
	}
	return tools.Info{}, fault.Usagef("no tool %q is offered in mode %s with these flags: choose one of %s", name, r.Mode, strings.Join(names, ", "))
}

// userTools are the declared tools that do not come with ask.
func (r *Run) userTools() []providers.Tool {
	var out []providers.Tool
	for _, t := range r.Declared {
		if !tools.IsBuiltin(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// useSchema reads --schema. A provider without structured output gets it
// in the system prompt; its protocol, built from the same catalog row,
// leaves it out of the request.
func (r *Run) useSchema() error {
	given := r.Settings.Schema
	if given.Value == "" && given.Source != "flag --schema" {
		return nil // an empty --schema is an error; no schema at all is not
	}
	schema, err := readSchema(given.Value, r.env.Wd)
	if err != nil {
		return err
	}
	r.schema = schema
	if !r.Provider.NativeSchema {
		r.System += "\n\n" + providers.SchemaInstruction + string(schema)
	}
	return nil
}

// FirstRequest is the body the run would send first, with the prompt as
// the last user message after any earlier conversation.
func (r *Run) FirstRequest(prompt string) ([]byte, error) {
	if r.Provider.LocalProgram {
		return nil, fault.Usagef("%s runs a local program, not an HTTP API: it has no request body", r.Provider.Name)
	}
	user, err := r.caller.Protocol.UserMessage(prompt, r.attachments...)
	if err != nil {
		return nil, fmt.Errorf("render prompt: %w", err)
	}
	msgs := append(slices.Clone(r.history()), user)
	return r.caller.Build(providers.Request{
		System: r.System, Messages: msgs, Tools: r.Declared, Stream: r.Stream,
		MaxTokens: r.Settings.MaxTokens.Value, Schema: r.schema, Cache: r.cache(msgs[0]),
	})
}

// cache is how the run's requests ask the provider to cache their prefix
// (DESIGN §3, Cost): marks where the provider caches only what is marked,
// and a key naming the conversation where the provider routes by one;
// nothing with --no-cache. The key is a digest of the conversation's first
// message, so that every step, a replay and a continued run all send the
// same one.
func (r *Run) cache(first json.RawMessage) providers.Cache {
	if r.Settings.NoCache.Value {
		return providers.Cache{}
	}
	c := providers.Cache{Mark: r.Provider.MarksCache(r.ModelName)}
	if r.Provider.CacheKey {
		sum := sha256.Sum256(first)
		c.Key = "ask-" + hex.EncodeToString(sum[:16])
	}
	return c
}

// history is the conversation carried on, if any.
func (r *Run) history() []json.RawMessage {
	if c := r.Settings.Conversation; c != nil {
		return c.History
	}
	return nil
}

// RunCalls runs calls by hand as one step of the run would (`ask tools
// run`): under its policy, approvals and --timeout, with its tools, each
// call answered in order. A refusal by --safe is an error of kind Refused,
// returned with the results; onDenied hears of every denial.
func (r *Run) RunCalls(parent context.Context, calls []providers.ToolCall, onDenied func(providers.ToolCall, policy.Verdict)) ([]providers.ToolResult, error) {
	ctx, cancel := loop.WithTimeout(parent, r.Timeout)
	defer cancel()
	var refused []string
	outcomes := loop.RunCalls(ctx, r.gate, r.toolbox, calls, loop.CallHooks{
		OnDenied: func(c providers.ToolCall, v policy.Verdict) {
			if v.Refusal {
				refused = append(refused, c.Name)
			}
			if onDenied != nil {
				onDenied(c, v)
			}
		},
	})
	results := make([]providers.ToolResult, len(outcomes))
	for i, o := range outcomes {
		results[i] = o.Result
	}
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, loop.ErrTimeout):
		return results, fmt.Errorf("stopped: --timeout %s reached: %w", r.Timeout, cause)
	case cause != nil && parent.Err() != nil:
		return results, cause
	case len(refused) > 0:
		return results, asKind(Refused, fmt.Errorf("%s refused by policy: %s", termtext.Plural(len(refused), "tool call", "tool calls"), strings.Join(refused, ", ")))
	}
	return results, nil
}

// OnClose adds fn to what Close does.
func (r *Run) OnClose(fn func()) { r.closers = append(r.closers, fn) }

// HasSchema reports whether the answer must match a JSON Schema.
func (r *Run) HasSchema() bool { return len(r.schema) > 0 }

// Protocol is the provider the settings name, with the config file's
// settings for it, and the wire protocol it speaks: what a provider stage
// (`ask provider format-tools`, …) works in.
func (s Settings) Protocol() (catalog.Provider, providers.Protocol, error) {
	row, err := catalog.Lookup(s.Provider.Value)
	if err != nil {
		return row, nil, asKind(Usage, err)
	}
	if s.KeyVars != nil {
		row.KeyEnv = s.KeyVars
	}
	proto, err := row.NewProtocol()
	if err != nil {
		return row, nil, asKind(Usage, fmt.Errorf("%s: %w", row.Name, err))
	}
	return row, proto, nil
}

// Send posts a request body as the run's model would, with its key,
// headers and retries, and copies the response to w as it arrives (`ask
// provider send`): a stream event by event, checked as the loop checks
// it, and ended by the idle timeout like the loop's. stream says which
// endpoint the body is for.
func (r *Run) Send(ctx context.Context, body []byte, stream bool, w io.Writer, h providers.Hooks) error {
	if r.caller == nil {
		return fault.Usagef("%s runs a local program, not an HTTP API: there is nothing to send a body to", r.Provider.Name)
	}
	proto := r.caller.Protocol
	resp, err := r.caller.Post(ctx, proto.Endpoint(r.BaseURL, r.ModelName, stream), body, h)
	if err != nil {
		return err
	}
	reply := providers.NewIdleBody(resp.Body, r.env.IdleTimeout)
	defer reply.Close()
	br := bufio.NewReader(reply)
	// A stream request may still be answered with one JSON document (an
	// error, or a server that ignores "stream"): that is copied as it is.
	if stream && (proto.Framing() == providers.NDJSON || !providers.StartsWithJSON(br)) {
		_, err = providers.ReadStream(io.TeeReader(br, w), proto.Framing(), proto.NewStream(), nil)
		if err == nil {
			_, err = io.Copy(w, br) // what follows the terminal event, such as "data: [DONE]"
		}
	} else {
		_, err = io.Copy(w, br)
	}
	if err == nil {
		return nil
	}
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	var apiErr *providers.APIError
	if errors.As(err, &apiErr) {
		apiErr.Provider = r.Provider.Name
		return apiErr
	}
	return asKind(Provider, fmt.Errorf("%s: read response: %w", r.Provider.Name, err))
}

// keyFilter keeps the run's key out of what the tools return: a file or a
// command's output that holds it would hand it to the model, the provider
// and the transcript.
type keyFilter struct {
	loop.Toolbox
	key *providers.Redactor
}

func (f keyFilter) Call(ctx context.Context, name, arguments string) (string, bool) {
	content, isErr := f.Toolbox.Call(ctx, name, arguments)
	return string(f.key.Redact([]byte(content))), isErr
}

// CheckArguments passes the check on when the tools have one.
func (f keyFilter) CheckArguments(name, arguments string) error {
	if c, ok := f.Toolbox.(loop.ArgumentChecker); ok {
		return c.CheckArguments(name, arguments)
	}
	return nil
}

// confirm asks the person at the terminal; without one the answer is no.
func (r *Run) confirm(ctx context.Context, question string) bool {
	return r.env.Confirm != nil && r.env.Confirm(ctx, question)
}
