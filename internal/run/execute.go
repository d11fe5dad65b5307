package run

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/tools"
	"github.com/ask-cli/ask/internal/trace"
	"github.com/ask-cli/ask/internal/undo"
)

// Output is where a run's events go and who watches it; the CLI chooses.
type Output struct {
	// Sinks receive every event as a JSON line: a --transcript file,
	// stdout under --events, replay --check's own record. Nil entries are
	// skipped.
	Sinks []io.Writer
	// History, when set, keeps the transcript among the past runs (ask
	// log, --continue), and prunes them to its limits after.
	History *history.Store
	// Observe is told of every event as it is written.
	Observe func(records.Event)
	// OnText receives answer text as it arrives; nil when nobody shows it
	// live.
	OnText func(string)
	// OnThought receives the model's thinking where the provider shows
	// it; nil when nobody shows it.
	OnThought func(string)
	// OnProgress is told when a step or a tool starts.
	OnProgress func(loop.Progress)
}

// Result is what a run came to, with the exit code it recorded and the
// line that says why it did not complete ("" when it did).
type Result struct {
	*loop.Result
	// ID names the run: its kept transcript, `ask log show ID`.
	ID       string
	Duration time.Duration
	// Changes are the files the run changed, in the order it did.
	Changes  []records.Change
	ExitCode int
	Why      string
	// WriteErr is the first failed write to a sink: a transcript that is
	// not whole.
	WriteErr error
	// Worktree is the --worktree the run changed and kept; nil for none.
	Worktree *records.Worktree
	// SkillsUsed are the skills activated, in order; Children the runs
	// the agent tool started; ParentID the run that started this one.
	SkillsUsed []string
	Children   []records.Child
	ParentID   string
}

// parentID is the run that started this one, "" for a run of its own.
func (r *Run) parentID() string {
	if c := r.Settings.child; c != nil {
		return c.parentID
	}
	return ""
}

// Execute runs the loop on prompt. It owns the transcript: run.started is
// the first event every sink gets and run.finished the last, whatever
// happens in between.
func (r *Run) Execute(ctx context.Context, prompt string, out Output) *Result {
	if c := r.Settings.Conversation; c != nil && c.paused != nil {
		return r.resume(ctx, out)
	}
	return r.execute(ctx, prompt, out, nil, nil)
}

// execute runs the loop on prompt, or carries on the pending run prev,
// or runs the next turn of a session.
func (r *Run) execute(ctx context.Context, prompt string, out Output, prev *pendingRun, turn *sessionTurn) *Result {
	// The id sorts as the runs started, by the real clock (Env.Now may be
	// pinned): --continue takes the newest.
	start := time.Now()
	id, last := r.keepHistory(out.History, history.NewID(start), prev, turn)
	defer r.commitHistory(out.History, last)
	var step atomic.Int64 // the step running, for the changes the tools report
	rec, tr := r.recorder(ctx, out, id, start, last, prev, &step)
	if prev == nil {
		rec.Emit(records.Event{Type: records.TypeRunStarted, ID: id, Version: r.env.Version, Provider: r.Provider.Name,
			Model: r.ModelName, Mode: r.Mode, Settings: r.recorded(prompt), ParentID: r.parentID()})
	}
	r.skills.start(rec.Emit, func() int { return int(step.Load()) })

	changes := r.watchChanges(rec, &step)
	defer r.root.StopWatching()
	ctx, cancel := loop.WithTimeout(ctx, r.Timeout) // 0: no limit
	defer cancel()
	r.useCache(prompt, prev)
	box, git := r.watchedToolbox(ctx, prev, tr)
	transcript := ""
	if out.History != nil && out.History.Dir != "" {
		transcript = out.History.Path(id)
	}
	cfg := r.loopConfig(out, rec, box, changes, &step, prev)
	if cfg.Gate != nil {
		cfg.Gate = readyAhead{cfg.Gate, git, r}
	}
	before := prev.carried()
	res := r.runLoop(ctx, id, transcript, rec, prompt, cfg)
	return r.finishRun(ctx, rec, id, start, res, git, changes, before)
}

// keepHistory starts keeping the run's transcript among the past runs: a new
// one under id, or, for a pending run or a session's turn, the one it
// carries on. It returns the id the run is kept under.
func (r *Run) keepHistory(h *history.Store, id string, prev *pendingRun, turn *sessionTurn) (string, *history.Recording) {
	var last *history.Recording
	var err error
	switch {
	case prev != nil:
		id = prev.id
		last, err = h.KeepAgain(id, prev.transcript)
	case turn != nil && turn.prior != nil:
		id = turn.id
		last, err = h.KeepAgain(id, turn.prior)
	case turn != nil:
		id = turn.id
		last, err = h.Keep(r.env.Getenv, id)
	default:
		last, err = h.Keep(r.env.Getenv, id)
	}
	if err != nil && r.env.Verbose {
		r.note("not keeping this run in the history: %v", err)
	}
	return id, last
}

// commitHistory ends keeping the transcript, and prunes the past runs to the
// store's limits.
func (r *Run) commitHistory(h *history.Store, last *history.Recording) {
	err := last.Commit()
	if err == nil && last != nil {
		err = h.PruneAfter(last.Size())
	}
	if err != nil && r.env.Verbose {
		r.note("not keeping this run in the history: %v", err)
	}
}

// recorder is where the run's events go: the sinks, the kept transcript,
// the observers, the subagents and the trace, which it returns, nil when
// not tracing.
func (r *Run) recorder(ctx context.Context, out Output, id string, start time.Time, last *history.Recording, prev *pendingRun, step *atomic.Int64) (*records.Recorder, *trace.Run) {
	rec := records.NewRecorder(append(out.Sinks, last.Writer())...)
	rec.Redact(providers.NewRedactor(r.Secrets()...))
	if out.Observe != nil {
		rec.Observe(out.Observe)
	}
	r.family.start(id, out.History, func() int { return int(step.Load()) }, out.Observe)
	if r.family != nil {
		rec.Observe(r.family.observe)
	}
	// Spans, when the OTEL_* variables ask for them; the CLI flushes them
	// at exit.
	tr, err := trace.StartRun(ctx, trace.Options{Getenv: r.env.Getenv, Version: r.env.Version, Secrets: r.Secrets(), ProviderName: r.Provider.TracedName()})
	if err != nil {
		r.note("warning: %v", err)
	}
	if tr != nil {
		rec.Observe(tr.Observe)
		if prev != nil {
			// The trace of a run carried on is this part's: it starts now,
			// with the held request's span, which its response closes.
			for _, ev := range []records.Event{prev.start, prev.held} {
				if ev.Type != "" {
					ev.Time = start
					tr.Observe(ev)
				}
			}
		}
	}
	return rec, tr
}

// useCache tells the caller which first message the provider's cache
// is keyed on: a pending run's own, when it is carried on.
func (r *Run) useCache(prompt string, prev *pendingRun) {
	if r.caller == nil {
		return
	}
	first := r.firstMessage(prompt)
	if prev != nil && len(prev.end.History) > 0 {
		first = prev.end.History[0]
	}
	r.caller.Cache = r.cache(first)
}

// watchedToolbox is the toolbox the loop calls: the run's tools, behind
// the hooks and the watch for changes, and the git state undo judges by.
func (r *Run) watchedToolbox(ctx context.Context, prev *pendingRun, tr *trace.Run) (loop.Toolbox, *gitState) {
	// PostToolUse hooks run inside the watch, so that what a formatter
	// hook changes after a command is reported with it.
	box := r.toolbox
	if r.hooks != nil {
		box = hookedTools{box, r.hooks}
	}
	git := &gitState{}
	if prev != nil && prev.end.Git != nil {
		// The repository as the run's first command found it, before the
		// run stopped: undo judges every change by it.
		git.once.Do(func() {})
		git.state = prev.end.Git
		git.taken.Store(true)
	}
	box = watchedTools{box, r.root, tr, r, git}
	return box, git
}

// readyAhead starts making ready what a step's calls wait for as they are
// put to the gate, before any of them runs: the git state undo needs, for
// a call that may change something, and the change watcher, for a call it
// watches. Both get ready while a person decides, and while the state and
// the watcher wait for each other, not one after the other. A step of
// readers alone, and a run that calls no tool, start neither.
type readyAhead struct {
	loop.Gate
	git *gitState
	run *Run
}

func (g readyAhead) Check(ctx context.Context, calls []providers.ToolCall) []policy.Verdict {
	git, watch := false, false
	for _, c := range calls {
		git = git || !tools.ChangesNothing(c.Name)
		watch = watch || !tools.ReportsOwnChanges(c.Name)
	}
	if git {
		g.git.start(ctx, g.run)
	}
	if watch {
		g.run.root.ReadyWatching()
	}
	return g.Gate.Check(ctx, calls)
}

// loopConfig is the loop's configuration for the run, carrying on from
// where a pending run stopped when prev is set.
func (r *Run) loopConfig(out Output, rec *records.Recorder, box loop.Toolbox, changes func() []records.Change, step *atomic.Int64, prev *pendingRun) loop.Config {
	cfg := loop.Config{
		Model: r.model, System: r.System, Attachments: r.attachments,
		Tools: r.Declared, Toolbox: box, Gate: r.gate, MaxSteps: r.MaxSteps,
		Stream: r.Stream, MaxTokens: r.Settings.MaxTokens.Value, Schema: r.schema, History: r.history(),
		Changes:  func() int { return len(changes()) },
		Recorder: rec, OnText: out.OnText, OnThought: out.OnThought, Verify: r.verifier(rec), Budget: r.budget(),
		Window: r.Window, CompactAt: r.Settings.CompactAt.Value, NoCompact: r.Settings.Compact.Value == "off", OnCompact: r.compactHooks(),
		OnProgress: func(p loop.Progress) {
			step.Store(int64(p.Step))
			if out.OnProgress != nil {
				out.OnProgress(p)
			}
		},
	}
	if prev != nil {
		e := prev.end
		cfg.History = e.History
		cfg.Resume = &loop.Resume{Step: e.Steps, UsagePerStep: e.UsagePerStep, Paused: e.Paused}
		if e.Usage != nil {
			cfg.Resume.Usage = *e.Usage
		}
	}
	return cfg
}

// priorPart is what the earlier part of a pending run did, which its
// run.finished counts with this part's.
type priorPart struct {
	toolCount int
	denials   []records.Denial
	changes   []records.Change
	took      time.Duration
}

// carried is what p did before it stopped; nothing for a new run.
func (p *pendingRun) carried() priorPart {
	if p == nil {
		return priorPart{}
	}
	e := p.end
	return priorPart{toolCount: e.ToolCount, denials: e.Denials, changes: e.Changes,
		took: time.Duration(e.DurationMS) * time.Millisecond}
}

// finishRun settles what the run came to, with what an earlier part of
// it did, and records it as run.finished, the transcript's last event.
func (r *Run) finishRun(ctx context.Context, rec *records.Recorder, id string, start time.Time, res *loop.Result,
	git *gitState, changes func() []records.Change, before priorPart) *Result {
	code, why := r.Outcome(res)
	answer := res.Answer
	changed := append(slices.Clone(before.changes), changes()...)
	took := time.Since(start) + before.took
	// The run's cost is the provider's figure, else its tokens at the
	// config file's prices and the run's rate (tier, batch engine).
	res.Usage.Cost = r.runCost(res.Usage)
	// The children's usage and cost are the parent's too.
	children, childUsage, _ := r.family.Children()
	if len(children) > 0 {
		res.Usage = res.Usage.Add(childUsage)
	}
	skillsUsed := r.skills.Used()
	tier, rate := r.billing()
	kept := r.settleWorktree(ctx, res.Status)
	rec.Emit(records.Event{Type: records.TypeRunFinished, Worktree: kept, ID: id, Git: git.get(), Status: res.Status, Answer: &answer, Steps: res.Steps,
		ToolCount: before.toolCount + len(res.Calls), Usage: &res.Usage, UsagePerStep: res.UsagePerStep, Denials: append(slices.Clone(before.denials), res.Denials...),
		Changes: changed, ExitCode: code, DurationMS: took.Milliseconds(), Cost: res.Usage.Cost, Tier: tier, PriceRate: rate,
		History: res.History, Deferred: res.Deferred, Paused: res.Paused, SkillsUsed: skillsUsed, Children: children})
	return &Result{Result: res, ID: id, Duration: took, Changes: changed, ExitCode: code, Why: why, WriteErr: rec.Err(), Worktree: kept,
		SkillsUsed: skillsUsed, Children: children, ParentID: r.parentID()}
}

// runLoop runs the loop on prompt between the session hooks: a prompt a
// UserPromptSubmit hook blocks is never sent.
func (r *Run) runLoop(ctx context.Context, id, transcript string, rec *records.Recorder, prompt string, cfg loop.Config) *loop.Result {
	defer r.endHooks(ctx)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	r.stopOnHook(cancel)
	prompt, err := r.startHooks(ctx, id, transcript, rec, prompt, cfg.Resume != nil)
	if cause := context.Cause(ctx); errors.Is(cause, loop.ErrHookStopped) {
		rec.Emit(records.Event{Type: records.TypeError, Error: cause.Error()})
		return &loop.Result{Status: loop.StatusHookStopped, Err: cause}
	}
	if err != nil {
		rec.Emit(records.Event{Type: records.TypeError, Error: err.Error()})
		return &loop.Result{Status: loop.StatusError, Err: err}
	}
	cfg.Prompt = prompt
	// The watcher's picture, which the first call would otherwise wait
	// for, is taken while the first request is out. The tools' schemas
	// are not: each is compiled by the first call of its tool (about 0.1
	// ms), since compiling them all in the background made every answer
	// without a tool call 0.2× slower on two cores.
	r.root.StartWatching()
	return loop.Run(ctx, cfg)
}

// watchChanges records every file the tools change as a file.changed
// event of the step running, and returns the list so far, for
// run.finished.
func (r *Run) watchChanges(rec *records.Recorder, step *atomic.Int64) func() []records.Change {
	var mu sync.Mutex
	var changes []records.Change
	contents := contentBudget{seen: map[string]bool{}}
	if r.root == nil {
		return func() []records.Change { return nil }
	}
	r.root.OnChange(func(c tools.Change) {
		ch := records.Change{Path: c.Path, Action: c.Action, Tool: c.Tool}
		if c.Counted {
			added, removed := c.Added, c.Removed
			ch.LinesAdded, ch.LinesRemoved = &added, &removed
		}
		mu.Lock()
		content := contents.of(c)
		changes = append(changes, ch)
		mu.Unlock()
		rec.Emit(records.Event{Type: records.TypeFileChanged, Step: int(step.Load()), Change: &ch, Contents: content})
	})
	r.network.set(func(host string, port int, allowed bool) {
		rec.Emit(records.Event{Type: records.TypeNetwork, Step: int(step.Load()), Host: host, Port: port, Allowed: &allowed})
	})
	r.root.OnWatchProblem(func(msg string) {
		r.note("warning: %s", msg)
		rec.Emit(records.Event{Type: records.TypeError, Step: int(step.Load()), Error: msg})
	})
	// The picture the watcher starts from is taken while the first
	// request is out (runLoop), off the first call's path; the kernel is
	// asked to watch only by the first call that needs it: closing an
	// inotify instance waits for the kernel (an RCU grace period, 10–20
	// ms here), which every run that calls no command would pay at exit.
	return func() []records.Change {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(changes)
	}
}

// maxRunContent bounds the content a run's changes record in all: a
// command rewriting a tree, or a model editing a large file again and
// again, must not make a transcript of hundreds of megabytes. Past it,
// only the hashes are recorded, and undo and ask log diff say why they
// cannot do more.
const maxRunContent = 64 << 20

// contentBudget decides what content each change records.
type contentBudget struct {
	seen     map[string]bool // paths changed before in this run
	recorded int
}

// of is the content a change records: its content before only the first
// time the run changes a file (undo needs no other), and nothing but the
// hash once the run's budget is spent.
func (b *contentBudget) of(c tools.Change) *records.Contents {
	out := &records.Contents{AfterSHA256: c.AfterSHA256}
	first := !b.seen[c.Path]
	b.seen[c.Path] = true
	size := len(c.After)
	if first {
		size += len(c.Before)
	}
	if (c.HasBefore && first || c.HasAfter) && b.recorded+size > maxRunContent {
		out.Omitted = "the run's changes passed 64 MB of recorded content"
		return out
	}
	b.recorded += size
	if c.HasBefore && first {
		out.SetBefore(c.Before)
	}
	if c.HasAfter {
		out.SetAfter(c.After)
	}
	return out
}

// gitState is the repository as the run found it, for `ask undo` to know
// which files a command changes it may restore from git. It is read by the
// first tool that changes a file or runs a command, before it does, and
// recorded only once a command has run (take): a run whose model calls no
// command records none, and a one-shot answer starts no git. Under --safe
// commands change nothing, and it is not read.
type gitState struct {
	once  sync.Once
	taken atomic.Bool
	state *records.GitState
}

// start reads the state in the background; read and take wait for it.
func (g *gitState) start(ctx context.Context, r *Run) {
	go g.read(ctx, r)
}

func (g *gitState) read(ctx context.Context, r *Run) {
	g.once.Do(func() {
		if r.Settings.Safe.Value {
			return
		}
		st, err := undo.GitStateOf(ctx, r.workdir)
		if err != nil && r.env.Verbose && ctx.Err() == nil {
			r.note("ask undo will not restore what commands change from git: %v", err)
		}
		g.state = st
	})
}

// take is called before each command: the state read, or being read,
// is the run's from now on.
func (g *gitState) take(ctx context.Context, r *Run) {
	g.read(ctx, r)
	if g.state != nil || !r.Settings.Safe.Value {
		g.taken.Store(true)
	}
}

// get is the state taken, nil when no command ran.
func (g *gitState) get() *records.GitState {
	if g == nil || !g.taken.Load() {
		return nil
	}
	return g.state
}

// watchedTools reports, as the file changes of each call, what a tool that
// does not say it itself changed in the working directory: the shell, user
// tools, MCP tools (DESIGN §5: the change watcher).
type watchedTools struct {
	loop.Toolbox
	root  *tools.Root
	trace *trace.Run // nil when not tracing
	run   *Run
	git   *gitState
}

func (w watchedTools) Call(ctx context.Context, name, arguments string) (string, bool) {
	ctx = w.trace.CallContext(ctx, loop.CallID(ctx))
	if w.root == nil {
		return w.Toolbox.Call(ctx, name, arguments)
	}
	if tools.ReportsOwnChanges(name) {
		// The state is the repository's before anything of the run's
		// changed it: a file tool that writes waits for the read under
		// way.
		if !tools.ChangesNothing(name) {
			w.git.read(ctx, w.run)
		}
		return w.Toolbox.Call(ctx, name, arguments)
	}
	// The watcher gets ready while the state is read (readyAhead), and
	// the call waits for both.
	done := w.root.Watch(name)
	defer done()
	w.git.take(ctx, w.run)
	return w.Toolbox.Call(ctx, name, arguments)
}

// CheckArguments passes the check on when the tools have one.
func (w watchedTools) CheckArguments(name, arguments string) error {
	if c, ok := w.Toolbox.(loop.ArgumentChecker); ok {
		return c.CheckArguments(name, arguments)
	}
	return nil
}

// Secrets are what the run must never show or record: its key, and a
// password in its base URL. Its own records are redacted of them; the CLI
// redacts what it writes itself.
func (r *Run) Secrets() []string {
	var out []string
	if r.caller != nil && r.caller.Key != "" {
		out = append(out, r.caller.Key)
	}
	if k := r.Settings.Key.Value.Reveal(); k != "" {
		out = append(out, k)
	}
	if u, err := url.Parse(r.BaseURL); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		}
	}
	return out
}

// recorded is what run.started says the run was asked to do: enough for
// replay to rebuild it and for --continue to carry it on.
func (r *Run) recorded(prompt string) *records.Settings {
	s := r.Settings
	var names []string
	for _, t := range r.Declared {
		names = append(names, t.Name)
	}
	// A password in the base URL is masked: the transcript is not a
	// credential store.
	set := &records.Settings{Prompt: prompt, Attachments: r.attachments, System: r.System, ProjectFile: r.ProjectFile, BaseURL: providers.RedactURL(r.BaseURL), Workdir: r.workdir,
		MaxSteps: r.MaxSteps, Timeout: r.Timeout.String(), Stream: r.Stream, Tools: names,
		MaxTokens: s.MaxTokens.Value, NoCache: s.NoCache.Value, Schema: r.schema, History: r.history(),
		ToolProtocol: s.ToolProtocol.Value, Safe: s.Safe.Value, UserTools: r.userTools(),
		Temperature: s.temperature(), Reasoning: s.Reasoning.Value, Tier: s.Tier.Value,
		ContextWindow: r.Window, CompactAt: s.CompactAt.Value, Compact: s.Compact.Value}
	// Tools that --no-tools kept from loading are not recorded, so that a
	// continued run does not load them either. The tools file is absolute:
	// -c may run from another directory.
	if !s.NoTools.Value {
		set.ToolsFile = AbsPath(r.env.Wd, s.ToolsFile.Value)
		set.MCP = s.MCP.Value
	}
	return set
}

// firstMessage is the conversation's first message: the earlier run's, or
// the prompt's.
func (r *Run) firstMessage(prompt string) json.RawMessage {
	if h := r.history(); len(h) > 0 {
		return h[0]
	}
	user, _ := r.model.CurrentProtocol().UserMessage(prompt) // the loop reports a failure to render it
	return user
}
