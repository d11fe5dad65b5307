// Package batchrun is `ask batch` below its command line: it builds each
// task's run through internal/run, sends the runs' requests through a
// provider's batch interface with --batch-api, leaves a batch pending
// with --no-wait and carries it on with --resume (DESIGN §8). The
// command keeps the flags, the streams and the exit codes.
package batchrun

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/termtext"
	"github.com/ask-cli/ask/internal/trace"
)

// Config is one invocation of ask batch.
type Config struct {
	// Flags are the command line's run settings, which each task's run
	// resolves (run.Resolve) over the environment (Getenv), the config
	// file (RunConfig) and the defaults.
	Flags     run.Settings
	RunConfig *run.Config
	// Env is the runs' world; its HTTP and Limiter are set here.
	Env    run.Env
	Getenv func(string) string
	// Secrets is told of every secret a run holds, for the CLI's redactor.
	Secrets func(...string)
	// Input holds the task lines (nil with Resume).
	Input io.Reader
	// J is -j; JSet says it was given.
	J     int
	JSet  bool
	Shard string
	// TasksName names the task file for the result file's pin ("-" for
	// stdin); RetryFailed is --retry-failed, Rate --rate ("" for none).
	TasksName   string
	RetryFailed bool
	Rate        string
	// Output is --output, "" for Out.
	Output string
	Out    io.Writer
	// BatchAPI is --batch-api, NoWait --no-wait; Resume is --resume
	// (Resuming) and its id ("" for the newest).
	BatchAPI, NoWait, Resuming bool
	Resume                     string
	// Err takes the notes and the progress line, drawn when Progress.
	Err      io.Writer
	Progress bool
	Quiet    bool
	Version  string
}

// Run runs the batch. The error is a usage error (fault.Usage) or what
// ended the batch; Summary.Code is the tasks' exit code.
func Run(ctx context.Context, cfg Config) (batch.Summary, error) {
	b := &runner{cfg: cfg, flags: cfg.Flags, j: cfg.J, shardText: cfg.Shard, output: cfg.Output}
	return b.run(ctx)
}

type runner struct {
	cfg       Config
	flags     run.Settings
	j         int
	shardText string
	output    string
	rate      time.Duration // --rate's gap between requests
	env       run.Env
	store     *history.Store
	tr        *trace.Batch
	rounds    *batch.Rounds
	prog      *Progress
	settings  run.Settings // resolved once, for the provider and key

	// resumed is the pending batch carried on (--resume), and its dir.
	resumed    *State
	resumedDir string
	replies    map[string]batch.Reply
	held       map[string]HeldTask // by task id

	// With --no-wait: the state directory of this invocation, and what
	// is learned for its state.
	stateID, stateDir string
	mu                sync.Mutex
	pending           *batch.Pending
	runs              map[string]HeldTask // by task id: run id, transcript
	unstarted         []TaskLine
	seq               int
	saved             bool // the state was kept
}

func (b *runner) run(ctx context.Context) (batch.Summary, error) {
	var sum batch.Summary
	shard, err := b.prepare()
	if err != nil {
		return sum, err
	}
	in := b.cfg.Input
	pin, total, err := b.pin(shard)
	if err != nil {
		return sum, err
	}
	var out *batch.Output
	var done *batch.Done
	var sink *batch.Sink
	if b.output != "" {
		if out, err = batch.OpenOutput(b.output, batch.OutputOptions{Pin: pin, RetryFailed: b.cfg.RetryFailed}); err != nil {
			if _, ok := fault.KindOf(err); ok {
				return sum, err
			}
			return sum, fault.Usagef("%v", err)
		}
		defer func() { out.Close() }()
		sink, done = out.Sink(), out.Done
	}
	if b.resumed != nil {
		// The batch's replies first: not ended, the state stays for later.
		replies, ended, err := b.rounds.Collect(ctx, b.resumed.BatchID, !b.cfg.NoWait)
		if err != nil {
			return sum, fmt.Errorf("--resume: %w", err)
		}
		if !ended {
			b.note(fmt.Sprintf("ask batch: batch %s of %s is still in progress; run ask batch --resume %s again later", termtext.Safe(b.resumed.BatchID), termtext.Safe(b.resumed.Provider), b.resumed.id))
			return sum, nil
		}
		b.replies = replies
		in = b.resumedTasks()
	}
	if b.cfg.NoWait {
		if err := b.leavePending(); err != nil {
			return sum, err
		}
		defer func() {
			if !b.saved {
				os.RemoveAll(b.stateDir) // nothing was left pending
			}
		}()
	}

	lim := batch.NewLimiter(b.j)
	lim.SetRate(b.rate)
	b.env = b.cfg.Env
	b.env.Notes, b.env.MCPStarting, b.env.Limiter = nil, nil, lim
	if b.env.Verbose && b.cfg.Err != nil {
		b.env.Notes = &LockedWriter{W: b.cfg.Err} // runs write at once
	}
	// With OTEL_* set, the batch is one trace: a span for it, one for each
	// task, and each task's run under its task's.
	ctx, tr := trace.StartBatch(ctx, trace.Options{Getenv: b.cfg.Getenv, Version: b.cfg.Version})
	defer tr.End()
	b.tr = tr
	b.prog = NewProgress(b.cfg.Err, b.cfg.Progress && !b.cfg.Quiet)
	b.prog.SetTotal(total)
	defer b.prog.Stop()
	if sink == nil {
		// Result lines on stdout: on a terminal shared with the progress
		// line, each is written above it, never glued to it.
		sink = batch.NewSink(b.prog.Above(b.cfg.Out), nil)
	}
	if b.rounds != nil {
		b.env.HTTP = &http.Client{Transport: b.rounds.Transport()}
		b.env.PriceRate, b.env.Billing = b.rounds.PriceRate(), "batch"
		b.rounds.OnRound = func(id string, n int) {
			b.note(fmt.Sprintf("ask batch: round %s: %d requests", termtext.Safe(id), n))
		}
		rctx, stop := context.WithCancel(ctx)
		defer stop()
		go b.rounds.Run(rctx)
	}
	sum, err = batch.Run(ctx, batch.Config{
		Input: in, J: b.j, Shard: shard, Done: done, Limiter: lim, Exec: b.exec, Sink: sink,
		OnStart: b.prog.Started, OnResult: b.prog.Ended, OnUnstarted: b.unstartedTask, OnAgain: b.again, OnSkip: b.prog.Skipped,
	})
	b.prog.Stop()
	if out != nil && err == nil && (sum.Again > 0 || len(sum.FixedLines) > 0) {
		err = out.Compact(sum.FixedLines)
	}
	b.sayKept(sum)
	if ctx.Err() != nil || err != nil {
		return sum, err
	}
	return sum, b.finish()
}

// pin is what the result file is made for, and how many tasks the shard
// has (0 when unknown): a task file that can be read twice is read for
// its ids first; stdin and a resumed batch pin the shard alone.
func (b *runner) pin(shard batch.Shard) (batch.Pin, int, error) {
	p := batch.Pin{Tasks: b.cfg.TasksName, Shard: shard.String()}
	f, ok := b.cfg.Input.(*os.File)
	if b.resumed != nil || !ok {
		return p, 0, nil
	}
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return p, 0, nil
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return p, 0, nil
	}
	hash, count, inShard, err := batch.TaskIDs(f, shard)
	if err != nil {
		return p, 0, err
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return p, 0, fmt.Errorf("read the tasks again: %w", err)
	}
	p.IDs, p.Count = hash, count
	return p, inShard, nil
}

// again says that a task the result file held runs again.
func (b *runner) again(t batch.Task, v batch.Verdict) {
	if v == batch.Refix {
		b.note(fmt.Sprintf("ask batch: task %s (line %d) was refused before; its line reads now, and it runs", termtext.Safe(t.ID), t.Line))
	}
}

// sayKept says what a rerun kept as it was: nothing is skipped unsaid.
func (b *runner) sayKept(sum batch.Summary) {
	if sum.Again > 0 && b.cfg.RetryFailed {
		b.note(fmt.Sprintf("ask batch: %s again; %s keeps one line a task", termtext.Plural(sum.Again, "task ran", "tasks ran"), b.output))
	}
	if sum.SkippedFailed > 0 {
		b.note(fmt.Sprintf("ask batch: %s that failed before kept %s result; --retry-failed runs them again",
			termtext.Plural(sum.SkippedFailed, "task", "tasks"), termtext.Agree(sum.SkippedFailed, "its", "their")))
	}
	if sum.SkippedRefused > 0 {
		b.note(fmt.Sprintf("ask batch: %s refused before %s still refused: mend %s as %s result line's error says, and rerun",
			termtext.Plural(sum.SkippedRefused, "task line", "task lines"), termtext.Agree(sum.SkippedRefused, "is", "are"),
			termtext.Agree(sum.SkippedRefused, "it", "them"), termtext.Agree(sum.SkippedRefused, "its", "each")))
	}
}

// prepare reads the pending batch --resume names, checks the batch's
// settings, and readies the history and the provider's batch interface.
func (b *runner) prepare() (batch.Shard, error) {
	var shard batch.Shard
	if b.cfg.Resuming {
		if err := b.loadResumed(batchesDir(b.cfg.Getenv)); err != nil {
			return shard, err
		}
	}
	if b.j < 1 {
		return shard, fault.Usagef("--jobs %d: give at least 1", b.j)
	}
	if b.shardText != "" {
		var err error
		if shard, err = batch.ParseShard(b.shardText, b.cfg.Getenv); err != nil {
			return shard, fault.Usagef("%v", err)
		}
		b.shardText = shard.String() // kept resolved: auto is this machine's
	}
	if b.cfg.Rate != "" {
		var err error
		if b.rate, err = batch.ParseRate(b.cfg.Rate); err != nil {
			return shard, fault.Usagef("%v", err)
		}
	}
	if b.cfg.BatchAPI {
		// A batch's requests are not streamed, and it may take the 24
		// hours of its completion window.
		b.flags.NoStream = run.Given(true, "--batch-api")
		if !b.flags.Timeout.IsGiven() {
			b.flags.Timeout = run.Given(time.Duration(0), "--batch-api: a batch may take its 24 hours")
		}
	}
	s, err := b.resolve(b.flags)
	if err != nil {
		return shard, err
	}
	b.settings = s
	if b.cfg.BatchAPI {
		if err := b.startRounds(); err != nil {
			return shard, err
		}
	}
	store, err := history.Open(b.cfg.Getenv)
	if err != nil {
		return shard, fault.Usagef("%v", err)
	}
	b.store = &store
	return shard, nil
}

// leavePending readies --no-wait: the directory its state will be kept
// in, and the round it will leave.
func (b *runner) leavePending() error {
	if b.rounds == nil {
		return fault.Usagef("--no-wait leaves a batch of the provider's batch interface pending: give --batch-api too")
	}
	var err error
	if b.stateID, b.stateDir, err = newStateDir(batchesDir(b.cfg.Getenv)); err != nil {
		return err
	}
	b.runs = map[string]HeldTask{}
	b.rounds.OnPending = func(p batch.Pending) error {
		b.mu.Lock()
		b.pending = &p
		b.mu.Unlock()
		return nil
	}
	return nil
}

// note writes a line on stderr unless -q.
func (b *runner) note(line string) {
	if b.cfg.Quiet || b.cfg.Err == nil {
		return
	}
	if b.prog != nil {
		b.prog.Note(line)
		return
	}
	fmt.Fprintln(b.cfg.Err, line)
}

// startRounds readies the provider's batch interface.
func (b *runner) startRounds() error {
	s := b.settings
	key := s.Key.Value.Reveal()
	row, err := catalog.Lookup(s.Provider.Value)
	if err != nil {
		return fault.Usagef("--batch-api: %v", err)
	}
	rounds, ok := batch.Open(row.Batch, s.BaseURL.Value, key, row.New(row).Authorize, b.cfg.Env.HTTP)
	if !ok {
		return fault.Usagef("--batch-api: the provider %s has no batch interface ask uses: choose -p %s", s.Provider.Value, strings.Join(catalog.WithBatch(), ", -p "))
	}
	b.rounds = rounds
	// The batch is read where it was sent, with this key: a state that
	// names another endpoint is not followed, it is said.
	if now := providers.RedactURL(b.rounds.BaseURL); b.resumed != nil && (b.resumed.Provider != s.Provider.Value || strings.TrimRight(b.resumed.BaseURL, "/") != now) {
		return fault.Usagef("--resume: the batch went to %s at %s, but the settings now name %s at %s: give -p %s --base-url %s",
			b.resumed.Provider, b.resumed.BaseURL, s.Provider.Value, now, b.resumed.Provider, b.resumed.BaseURL)
	}
	if b.j > b.rounds.Limit() {
		return fault.Usagef("--jobs %d: a batch of %s holds at most %d requests", b.j, s.Provider.Value, b.rounds.Limit())
	}
	if b.cfg.Secrets != nil {
		b.cfg.Secrets(key)
	}
	return nil
}

// loadResumed reads the pending batch --resume names, and takes its
// settings where the command line gives none.
func (b *runner) loadResumed(root string) error {
	st, dir, err := loadState(root, b.cfg.Resume)
	if err != nil {
		return err
	}
	b.resumed, b.resumedDir = st, dir
	kept, err := batch.DecodeSettings(st.Flags, "the pending batch "+st.id)
	if err != nil {
		return fmt.Errorf("--resume %s: %w", st.id, err)
	}
	b.flags.Values = settings.Over(b.cfg.Flags.Values, kept)
	if !b.cfg.JSet {
		b.j = st.Jobs
	}
	if b.shardText == "" {
		b.shardText = st.Shard
	}
	if b.output == "" {
		b.output = st.Output
	}
	b.cfg.BatchAPI = true
	b.held = map[string]HeldTask{}
	for _, h := range st.Held {
		t, err := batch.ParseTask([]byte(h.Task.Text), h.Task.Line)
		if err != nil {
			return fmt.Errorf("--resume %s: a held task: %w", st.id, err)
		}
		b.held[t.ID] = h
	}
	return nil
}

// resumedTasks are the task lines a resume runs: the held tasks' first,
// then those not started.
func (b *runner) resumedTasks() io.Reader {
	var buf bytes.Buffer
	for _, h := range b.resumed.Held {
		buf.WriteString(strings.TrimSpace(h.Task.Text) + "\n")
	}
	for _, u := range b.resumed.Unstarted {
		buf.WriteString(strings.TrimSpace(u.Text) + "\n")
	}
	return &buf
}

func (b *runner) unstartedTask(t batch.Task) {
	b.prog.Unstarted(t)
	b.mu.Lock()
	b.unstarted = append(b.unstarted, TaskLine{Line: t.Line, Text: string(t.Raw)})
	b.mu.Unlock()
}

// exec runs task t with its settings over the command line's, and says
// what came of it as its result line; a held task is carried on.
func (b *runner) exec(ctx context.Context, t batch.Task) (out batch.Result) {
	start := time.Now()
	held, isHeld := b.held[t.ID]
	tag := &batch.RunTag{ID: t.ID}
	if b.rounds != nil {
		if !b.rounds.Begin() {
			return batch.Result{ID: t.ID, Status: batch.StatusUnstarted}
		}
		defer b.rounds.End()
		var stop context.CancelCauseFunc
		ctx, stop = context.WithCancelCause(ctx)
		defer stop(nil)
		tag.Stop = func() { stop(loop.ErrPending) }
		ctx = batch.WithRun(ctx, tag)
	}
	ctx, span := b.tr.StartTask(ctx, t.ID)
	defer func() { span.End(out.Status, out.ExitCode) }()
	fail := func(err error) batch.Result {
		return batch.Result{ID: t.ID, Status: batch.StatusError, ExitCode: run.ExitCode(err), Error: oneLine(err.Error()),
			DurationMS: time.Since(start).Milliseconds()}
	}
	// A task line is a lower layer: it may narrow the command line's
	// settings, never widen them (an error for this task alone). Its
	// paths are checked, and used, where their links lead.
	lower := settings.RealPaths(t.Settings, b.env.Wd, run.AbsPath(b.env.Wd, b.settings.Workdir.Value))
	if _, err := settings.NarrowValues(b.settings.Values, lower); err != nil {
		return fail(fault.New(fault.Usage, err))
	}
	layer := b.flags
	layer.Values = settings.Over(lower, b.flags.Values)
	s, err := b.resolve(layer)
	if err != nil {
		return fail(err)
	}
	r, err := run.New(ctx, s, b.env)
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	if b.cfg.Secrets != nil {
		b.cfg.Secrets(r.Secrets()...)
	}
	o := run.Output{History: b.store}
	var copyPath string
	if b.stateDir != "" {
		// The transcript's copy beside the state, for --resume: the
		// history may prune the run before then.
		b.mu.Lock()
		b.seq++
		name := strconv.Itoa(b.seq) + ".jsonl"
		b.mu.Unlock()
		copyPath = filepath.Join(b.stateDir, "runs", name)
		f, err := os.OpenFile(copyPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return fail(fmt.Errorf("--no-wait: keep the transcript: %w", err))
		}
		defer f.Close()
		o.Sinks = append(o.Sinks, f)
		defer func() {
			if out.Status == batch.StatusPending {
				b.mu.Lock()
				b.runs[t.ID] = HeldTask{Task: TaskLine{Line: t.Line, Text: string(t.Raw)}, RunID: out.RunID, Transcript: name}
				b.mu.Unlock()
			} else {
				os.Remove(copyPath)
			}
		}()
	}
	var res *run.Result
	if isHeld {
		res = b.carryOn(ctx, r, held, tag, o)
	} else {
		res = r.Execute(ctx, t.Prompt, o)
	}
	out = batch.Result{ID: t.ID, RunID: res.ID, Status: res.Status, ExitCode: res.ExitCode, Answer: res.Answer,
		Usage: &res.Usage, Cost: res.Usage.Cost, DurationMS: res.Duration.Milliseconds(), Worktree: res.Worktree}
	if r.HasSchema() && res.Status == loop.StatusCompleted && json.Valid([]byte(res.Answer)) {
		out.Value = json.RawMessage(res.Answer)
	}
	switch {
	case res.Why != "":
		out.Error = oneLine(res.Why)
	case res.Err != nil:
		out.Error = oneLine(res.Err.Error())
	}
	return out
}

// resolve lays flags over the environment, the config file and the
// defaults, as every run's settings are resolved.
func (b *runner) resolve(flags run.Settings) (run.Settings, error) {
	return run.Resolve(run.Inputs{Flags: flags, Getenv: b.cfg.Getenv, Config: b.cfg.RunConfig, Wd: b.cfg.Env.Wd})
}

// carryOn continues a held task's run with its reply: one the batch did
// not answer goes again in the next round, once, then is the task's error.
func (b *runner) carryOn(ctx context.Context, r *run.Run, h HeldTask, tag *batch.RunTag, o run.Output) *run.Result {
	transcript, err := readNoFollow(filepath.Join(b.resumedDir, "runs", filepath.Base(h.Transcript)))
	if err == nil {
		_, err = run.ReadPending(transcript)
	}
	if err != nil {
		err = fmt.Errorf("--resume: the transcript of run %s: %w", h.RunID, err)
		return &run.Result{Result: &loop.Result{Status: loop.StatusError, Err: err}, ID: h.RunID, ExitCode: fault.ExitUsage, Why: err.Error()}
	}
	reply, ok := b.replies[h.CustomID]
	var rep *run.Reply
	switch {
	case ok:
		rep = &run.Reply{Status: reply.Status, Body: reply.Body}
	case h.Tries == 0:
		tag.Tries = 1 // sent again, in the next round
	default:
		u := batch.Unanswered()
		rep = &run.Reply{Status: u.Status, Body: u.Body}
	}
	return r.Continue(ctx, transcript, rep, o)
}

// finish keeps the state of a batch left pending and says how to go on,
// or removes what is no longer pending.
// The batch carried on is removed only then: were the new state not
// kept, a --resume could read the old one again.
func (b *runner) finish() error {
	b.mu.Lock()
	p := b.pending
	b.mu.Unlock()
	if p == nil || b.stateDir == "" {
		b.removeResumed()
		return nil
	}
	flags, err := batch.EncodeSettings(b.flags.Values)
	if err != nil {
		return err
	}
	st := State{Created: time.Now().UTC(), Provider: b.settings.Provider.Value, BaseURL: providers.RedactURL(b.rounds.BaseURL), BatchID: p.BatchID,
		Output: b.output, Jobs: b.j, Shard: b.shardText, Flags: flags, Unstarted: b.unstarted}
	for _, req := range p.Requests {
		if req.Run == nil {
			continue
		}
		h, ok := b.runs[req.Run.ID]
		if !ok {
			continue // the run ended otherwise
		}
		h.CustomID, h.Tries = req.CustomID, req.Tries
		st.Held = append(st.Held, h)
	}
	if err := st.save(b.stateDir); err != nil {
		return fmt.Errorf("--no-wait: keep the pending batch %s: %w", p.BatchID, err)
	}
	b.saved = true
	b.removeResumed()
	b.note(fmt.Sprintf("ask batch: batch %s of %s is pending with %s; continue with: ask batch --resume %s",
		termtext.Safe(p.BatchID), st.Provider, termtext.Plural(len(st.Held), "request", "requests"), b.stateID))
	return nil
}

func (b *runner) removeResumed() {
	if b.resumedDir != "" {
		os.RemoveAll(b.resumedDir)
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
