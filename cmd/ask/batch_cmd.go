package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/trace"
)

// batchCommand is `ask batch`: many runs from a file of tasks (DESIGN §8).
func batchCommand(stdio *IO) *cli.Command {
	return &cli.Command{
		Name:      "batch",
		Usage:     "run many tasks: JSON lines in, one result line per task out",
		UsageText: "ask batch [-j N] [--output FILE] [--shard I/N] [flags] [FILE]",
		Description: `Reads tasks as JSON lines from FILE (or stdin): {"id": "...", "prompt": "..."}
and any run setting by its flag name ("model", "max-steps", "workdir",
"schema", "timeout", ...), which lies over the command line's flags for
that task alone. Up to -j tasks run at once; each ends in one result line,
written as it ends:
{"id", "run_id", "status", "exit_code", "answer", "value", "usage", "cost",
"duration_ms", "error"}. A line that cannot be run is a result line with
status "invalid", its error and its line number; the batch goes on.
Every run is kept in the history (ask log show RUN_ID).

With --output FILE the results are appended there, one write per line,
synced; a rerun with the same file skips the tasks it holds, so a batch
killed at any moment loses only the runs under way. A 429 or 529 slows
every worker at once, honouring Retry-After. --shard I/N takes only the
tasks whose id hashes to shard I of N, to split one file across machines.
On a terminal a progress line on stderr. The exit code is 0 when every
task answered, else the highest task's.`,
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: 4, Usage: "run up to `N` tasks at once"},
			&cli.StringFlag{Name: "output", Usage: "append the results to `FILE` (not stdout) and skip the tasks it already holds"},
			&cli.StringFlag{Name: "shard", Usage: "run only the tasks whose id hashes to shard `I/N` (0 ≤ I < N)"},
			&cli.BoolFlag{Name: "batch-api", Usage: "send each round of model requests of all tasks as one batch of the provider's batch interface (OpenAI, Anthropic: half price; -j defaults to 1000)"},
		},
		Action: func(c *cli.Context) error { return batchAction(c, stdio) },
	}
}

func batchAction(c *cli.Context, stdio *IO) error {
	if err := checkQuietVerbose(c); err != nil {
		return err
	}
	if c.NArg() > 1 {
		return usageErr("batch takes one task file, got %d words (%q…)", c.NArg(), c.Args().Get(1))
	}
	j := c.Int("jobs")
	if c.Bool("batch-api") && !c.IsSet("jobs") {
		j = 1000 // a round holds a request of every task under way
	}
	if j < 1 {
		return usageErr("--jobs %d: give at least 1", j)
	}
	var shard batch.Shard
	if c.IsSet("shard") {
		var err error
		if shard, err = batch.ParseShard(c.String("shard")); err != nil {
			return usageErr("%v", err)
		}
	}
	// The command line's settings are checked once, before any task.
	flags := flagSettings(c, stdio)
	var rounds *batch.Rounds
	if c.Bool("batch-api") {
		// A batch's requests are not streamed, and it may take the 24 hours
		// of its completion window.
		flags.NoStream = run.Given(true, "--batch-api")
		if !flags.Timeout.IsGiven() {
			flags.Timeout = run.Given(time.Duration(0), "--batch-api: a batch may take its 24 hours")
		}
	}
	s, err := run.Resolve(run.Inputs{Flags: flags, Getenv: stdio.Getenv, Config: stdio.config, Wd: stdio.Wd})
	if err != nil {
		return err
	}
	if c.Bool("batch-api") {
		key := s.Key.Value.Reveal()
		switch s.Provider.Value {
		case "openai":
			rounds = batch.NewRounds(s.BaseURL.Value, key, stdio.HTTP)
		case "anthropic":
			rounds = batch.NewAnthropicRounds(s.BaseURL.Value, key, stdio.HTTP)
		case "gemini":
			rounds = batch.NewGeminiRounds(s.BaseURL.Value, key, stdio.HTTP)
		default:
			return usageErr("--batch-api: the provider %s has no batch interface ask uses: choose -p openai (Batch API), -p anthropic (Message Batches) or -p gemini (Batch Mode)", s.Provider.Value)
		}
		if j > rounds.Limit() {
			return usageErr("--jobs %d: a batch of %s holds at most %d requests", j, s.Provider.Value, rounds.Limit())
		}
		stdio.redactor.Add(key)
	}

	var in io.Reader = stdio.In
	if name := c.Args().First(); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			return usageErr("the task file: %v", err)
		}
		defer f.Close()
		in = f
	} else if stdio.InTTY || stdio.In == nil {
		return usageErr("no tasks: give a task file (ask batch tasks.jsonl) or pipe the tasks in")
	}

	sink := batch.NewSink(stdio.Out, nil)
	var done *batch.Done
	if path := c.String("output"); path != "" {
		out, err := batch.OpenOutput(path)
		if err != nil {
			return usageErr("%v", err)
		}
		defer out.Close()
		sink, done = out.Sink(), out.Done
	}
	store, err := history.Open(stdio.Getenv)
	if err != nil {
		return usageErr("%v", err)
	}

	quiet := c.Bool("quiet")
	lim := batch.NewLimiter(j)
	env := runEnv(c, stdio, statusFor(stdio, true))
	env.Notes, env.MCPStarting, env.Limiter = nil, nil, lim
	if env.Verbose {
		env.Notes = &lockedWriter{w: stdio.Err} // runs write at once
	}
	// With OTEL_* set, the batch is one trace: a span for it, one for each
	// task, and each task's run under its task's.
	ctx, tr := trace.StartBatch(c.Context, trace.Options{Getenv: stdio.Getenv, Version: versionString()})
	defer tr.End()
	b := &batchRunner{stdio: stdio, flags: flags, env: env, store: &store, trace: tr}
	prog := newBatchProgress(stdio, done, stdio.ErrTTY && !quiet)
	defer prog.stop()
	if rounds != nil {
		b.rounds = rounds
		b.env.HTTP = &http.Client{Transport: rounds.Transport()}
		b.env.PriceRate, b.env.Billing = rounds.PriceRate(), "batch"
		rounds.OnRound = func(id string, n int) {
			if !quiet {
				prog.note(fmt.Sprintf("ask batch: round %s: %d requests", id, n))
			}
		}
		ctx, stop := context.WithCancel(c.Context)
		defer stop()
		go rounds.Run(ctx)
	}
	sum, err := batch.Run(ctx, batch.Config{
		Input: in, J: j, Shard: shard, Done: done, Limiter: lim, Exec: b.exec, Sink: sink,
		OnStart: prog.started, OnResult: prog.ended,
	})
	prog.stop()
	if stopped := context.Cause(c.Context); stopped != nil {
		return withCode(interruptCode(stopped), fmt.Errorf("batch stopped: %d results written; run it again with the same --output to go on", sum.Results))
	}
	if err != nil {
		return withCode(exitFailure, err)
	}
	if sum.Code != exitOK {
		return &silentError{code: sum.Code}
	}
	return nil
}

// batchRunner runs one task of a batch.
type batchRunner struct {
	stdio *IO
	flags run.Settings
	env   run.Env
	store *history.Store
	// rounds, with --batch-api, gathers the model requests into batches.
	rounds *batch.Rounds
	trace  *trace.Batch // nil when not tracing
}

// exec runs task t with its settings over the command line's, and says
// what came of it as its result line.
func (b *batchRunner) exec(ctx context.Context, t batch.Task) (out batch.Result) {
	start := time.Now()
	ctx, span := b.trace.StartTask(ctx, t.ID)
	defer func() { span.End(out.Status, out.ExitCode) }()
	if b.rounds != nil {
		b.rounds.Begin()
		defer b.rounds.End()
	}
	fail := func(err error) batch.Result {
		return batch.Result{ID: t.ID, Status: batch.StatusError, ExitCode: exitCode(err), Error: oneLine(err.Error()),
			DurationMS: time.Since(start).Milliseconds()}
	}
	layer := b.flags
	layer.Values = settings.Over(t.Settings, b.flags.Values)
	s, err := run.Resolve(run.Inputs{Flags: layer, Getenv: b.stdio.Getenv, Config: b.stdio.config, Wd: b.stdio.Wd})
	if err != nil {
		return fail(err)
	}
	r, err := run.New(ctx, s, b.env)
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	b.stdio.redactor.Add(r.Secrets()...)
	res := r.Execute(ctx, t.Prompt, run.Output{History: b.store})
	out = batch.Result{ID: t.ID, RunID: res.ID, Status: res.Status, ExitCode: res.ExitCode, Answer: res.Answer,
		Usage: &res.Usage, Cost: res.Usage.Cost, DurationMS: res.Duration.Milliseconds()}
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

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// batchProgress is the progress line a terminal shows on stderr: done,
// failed, running, tokens, cost, rate.
type batchProgress struct {
	w                      io.Writer
	on                     bool
	start                  time.Time
	done, failed, running  atomic.Int64
	tokens                 atomic.Int64
	mu                     sync.Mutex
	wmu                    sync.Mutex // one line at a time on w
	cost                   float64
	costKnown              bool
	tick                   *time.Ticker
	quit                   chan struct{}
	stopOnce               sync.Once
	skipped, skippedFailed int
}

func newBatchProgress(stdio *IO, done *batch.Done, on bool) *batchProgress {
	p := &batchProgress{w: stdio.Err, on: on, start: time.Now(), quit: make(chan struct{})}
	if done != nil {
		p.skipped, p.skippedFailed = done.Count, done.Failed
	}
	if on {
		p.tick = time.NewTicker(250 * time.Millisecond)
		go func() {
			for {
				select {
				case <-p.tick.C:
					p.draw()
				case <-p.quit:
					return
				}
			}
		}()
	}
	return p
}

func (p *batchProgress) started(batch.Task) { p.running.Add(1) }

func (p *batchProgress) ended(r batch.Result) {
	if r.Status != batch.StatusInvalid {
		p.running.Add(-1)
	}
	p.done.Add(1)
	if !r.Answered() {
		p.failed.Add(1)
	}
	if r.Usage != nil {
		p.tokens.Add(int64(r.Usage.InputTokens + r.Usage.OutputTokens))
	}
	if r.Cost != nil {
		p.mu.Lock()
		p.cost += *r.Cost
		p.costKnown = true
		p.mu.Unlock()
	}
}

// line is the progress as one line.
func (p *batchProgress) line() string {
	done := p.done.Load()
	parts := []string{
		fmt.Sprintf("%d done", done+int64(p.skipped)),
		fmt.Sprintf("%d failed", p.failed.Load()+int64(p.skippedFailed)),
		fmt.Sprintf("%d running", p.running.Load()),
		fmt.Sprintf("%d tokens", p.tokens.Load()),
	}
	p.mu.Lock()
	if p.costKnown {
		parts = append(parts, fmt.Sprintf("$%.4f", p.cost))
	}
	p.mu.Unlock()
	if secs := time.Since(p.start).Seconds(); secs > 0 {
		parts = append(parts, fmt.Sprintf("%.1f/s", float64(done)/secs))
	}
	return "ask batch: " + strings.Join(parts, " · ")
}

// note writes a line above the progress line.
func (p *batchProgress) note(line string) {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if p.on {
		fmt.Fprintf(p.w, "\r\x1b[K%s\n", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *batchProgress) draw() {
	line := p.line()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
}

// stop ends the line with its last state.
func (p *batchProgress) stop() {
	p.stopOnce.Do(func() {
		if !p.on {
			return
		}
		p.tick.Stop()
		close(p.quit)
		p.draw()
		fmt.Fprintln(p.w)
	})
}

// lockedWriter lets many runs write notes to one stream, a line at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
