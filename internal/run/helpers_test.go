package run

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/policy"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/sandbox"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/term"
)

// world is where a test's runs are built, as the main command builds
// them: settings resolved from the flags, the environment and the config
// file ($ASK_CONFIG), then New and Execute with the run kept in the
// history. With a fake provider, ASK_PROVIDER, ASK_BASE_URL and a key point
// at it; XDG_STATE_HOME is a directory of the test's own.
type world struct {
	t    testing.TB
	wd   string
	vars map[string]string
	// sandbox is what the kernel is said to confine; nil is nothing, so
	// that --safe refuses every command on any machine.
	sandbox func() sandbox.Support
	// confirm, when set, is the person at the terminal answering a
	// yes-or-no question; nil is nobody to ask.
	confirm func(question string) bool
	// prompter, when set, approves calls as a person would.
	prompter policy.Prompter
	// http, when set, sends every request instead of a plain client.
	http *http.Client
	// idle shortens the stream idle timeout.
	idle time.Duration
	// offline builds runs that send nothing, as `ask provider request`
	// and `ask tools` do; they are built, not executed.
	offline bool
	// environ is the environment the tools' processes are given.
	environ []string
}

// newWorld is a world around srv (nil for no provider set up).
func newWorld(t testing.TB, srv *fakeprovider.Server) *world {
	t.Helper()
	w := &world{t: t, wd: t.TempDir(), vars: map[string]string{"XDG_STATE_HOME": t.TempDir()}}
	if srv != nil {
		w.vars["ASK_PROVIDER"] = "openai"
		w.vars["ASK_BASE_URL"] = srv.URL
		w.vars["OPENAI_API_KEY"] = "fake-test-not-a-real-key-0000"
	}
	return w
}

// with sets variables of the environment, and returns w.
func (w *world) with(kv ...string) *world {
	for i := 0; i+1 < len(kv); i += 2 {
		w.vars[kv[i]] = kv[i+1]
	}
	return w
}

// runsDir is where the history keeps the runs.
func (w *world) runsDir() string {
	return filepath.Join(w.vars["XDG_STATE_HOME"], "ask", "runs")
}

// ran is what one run came to, and what the CLI would have shown of it.
type ran struct {
	*Result // nil when the run could not be built
	run     *Run
	// err is why the settings or the run could not be built.
	err  error
	code int
	// stderr is what the run said on the way (Env.Notes), then its fault
	// as the CLI prints it.
	stderr string
	// events are everything the run recorded, run.started to run.finished.
	events []records.Event
	// transcript is the same as JSON lines.
	transcript []byte
	// diffs is how a replay's requests differ from the recorded ones, ""
	// when they do not.
	diffs string
}

// answer is the answer as stdout shows it: with one newline, or nothing.
func (r ran) answer() string {
	if r.Result == nil || r.Answer == "" || r.Status == "schema_failed" {
		return ""
	}
	return strings.TrimRight(r.Answer, "\n") + "\n"
}

// summary is the run's --json.
func (r ran) summary() Summary { return r.run.Summary(r.Result) }

// finished is the run's run.finished event, as JSON.
func (r ran) finished() gjson.Result {
	lines := strings.Split(strings.TrimSpace(string(r.transcript)), "\n")
	return gjson.Parse(lines[len(lines)-1])
}

// flagLayer is the flags a run is given, as pairs of setting name and
// value ("continue", "resume", "transcript", "profile" and "verbose" are
// the CLI's own and are returned apart). A string value of a list setting
// is one element; a list given twice adds up, as a repeated flag does.
func flagLayer(t testing.TB, pairs []any) (in Inputs, transcript, profile string, verbose bool) {
	t.Helper()
	if len(pairs)%2 != 0 {
		t.Fatalf("flags %v: want name, value pairs", pairs)
	}
	for i := 0; i < len(pairs); i += 2 {
		name, v := pairs[i].(string), pairs[i+1]
		switch name {
		case "continue":
			in.Continue = v.(bool)
			continue
		case "resume":
			in.Resume = v.(string)
			continue
		case "transcript":
			transcript = v.(string)
			continue
		case "verbose":
			verbose = v.(bool)
			continue
		case "profile":
			profile = v.(string)
			continue
		}
		row, ok := settings.Lookup(name)
		if !ok {
			t.Fatalf("no setting %q", name)
		}
		if s, ok := v.(string); ok && row.Kind == settings.List {
			v = []string{s}
		}
		if s, ok := v.(string); ok && row.Kind == settings.Duration {
			d, err := time.ParseDuration(s)
			if err != nil {
				t.Fatal(err)
			}
			v = d
		}
		if row.Kind == settings.List {
			if prev, _, ok := in.Flags.Values.Get(name); ok {
				v = append(slices.Clone(prev.([]string)), v.([]string)...)
			}
		}
		if err := in.Flags.Values.Set(name, v, "flag --"+name); err != nil {
			t.Fatal(err)
		}
	}
	return in, transcript, profile, verbose
}

// ask runs prompt with flags (name, value pairs) in w, as `ask FLAGS
// PROMPT` would.
func (w *world) ask(prompt string, flags ...any) ran {
	w.t.Helper()
	in, transcript, profile, verbose := flagLayer(w.t, flags)
	var notes lockedBuilder
	fail := func(err error) ran {
		fmt.Fprintf(&notes, "ask: %v\n", err)
		return ran{err: err, code: ExitCode(err), stderr: notes.String()}
	}
	getenv := func(k string) string { return w.vars[k] }
	in.Getenv, in.Wd = getenv, w.wd
	in.Config = LoadConfig(getenv, profile)
	s, err := Resolve(in)
	if err != nil {
		return fail(err)
	}
	env := w.env(&notes)
	env.Verbose = verbose
	env.Private = []string{transcript}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env.Offline = w.offline
	r, err := New(ctx, s, env)
	if err != nil {
		return fail(err)
	}
	defer r.Close()
	if w.offline {
		return ran{run: r, stderr: notes.String()}
	}
	var rec bytes.Buffer
	// stderr shows the events the main command notes there (run.go).
	out := Output{Sinks: []io.Writer{&rec}, Observe: func(ev records.Event) {
		if line := term.NoteLine(ev, verbose); line != "" {
			fmt.Fprintf(&notes, "ask: %s\n", line)
		}
	}}
	if transcript != "" {
		f, err := records.Create(transcript)
		if err != nil {
			w.t.Fatal(err)
		}
		defer f.Close()
		out.Sinks = append(out.Sinks, f)
	}
	store, err := history.Open(getenv)
	if err != nil {
		return fail(err)
	}
	out.History = &store
	res := r.Execute(ctx, prompt, out)
	if res.WriteErr != nil {
		w.t.Fatal(res.WriteErr)
	}
	if res.Why != "" {
		fmt.Fprintf(&notes, "ask: %s\n", res.Why)
	}
	events, err := records.Read(bytes.NewReader(rec.Bytes()))
	if err != nil {
		w.t.Fatalf("the transcript does not read back: %v", err)
	}
	return ran{Result: res, run: r, code: res.ExitCode, stderr: notes.String(), events: events, transcript: rec.Bytes()}
}

// env is the world a run is built in.
func (w *world) env(notes io.Writer) Env {
	getenv := func(k string) string { return w.vars[k] }
	e := Env{
		Getenv: getenv, Environ: func() []string { return w.environ },
		HTTP:    &http.Client{Timeout: 30 * time.Second},
		Now:     func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) },
		Wd:      w.wd,
		Version: "test", Notes: notes, SandboxCheck: noSandbox, Prompter: w.prompter,
		IdleTimeout: w.idle,
	}
	if w.http != nil {
		e.HTTP = w.http
	}
	if w.sandbox != nil {
		e.SandboxCheck = w.sandbox
	}
	if w.confirm != nil {
		e.Confirm = func(_ context.Context, q string) bool { return w.confirm(q) }
	}
	return e
}

// replay replays the transcript file as `ask replay --check` does, with
// the run's tools in wd; ran.diffs says how the requests differ.
func (w *world) replay(file string, opt ReplayOptions) ran {
	w.t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		w.t.Fatal(err)
	}
	events, err := records.Read(bytes.NewReader(data))
	if err != nil {
		w.t.Fatal(err)
	}
	var notes lockedBuilder
	opt.Check, opt.Workdir = true, w.wd
	s, prompt, rp, err := FromTranscript(events, opt)
	if err != nil {
		return ran{err: err, code: ExitCode(err)}
	}
	env := w.env(&notes)
	env.Replay = rp
	r, err := New(context.Background(), s, env)
	if err != nil {
		return ran{err: err, code: ExitCode(err)}
	}
	defer r.Close()
	var rec bytes.Buffer
	res := r.Execute(context.Background(), prompt, Output{Sinks: []io.Writer{&rec}})
	return ran{Result: res, run: r, code: res.ExitCode, stderr: notes.String(), transcript: rec.Bytes(), diffs: rp.Report()}
}

// noSandbox is a kernel that cannot confine, pinned for the tests.
func noSandbox() sandbox.Support {
	const why = "the tests say so (world.sandbox)"
	return sandbox.Support{FileSystem: why, Network: why}
}

// declaredNames lists the names of the tools a Chat Completions request
// declares, comma-separated.
func declaredNames(body []byte) string {
	var names []string
	for _, tool := range gjson.GetBytes(body, "tools").Array() {
		names = append(names, tool.Get("function.name").String())
	}
	return strings.Join(names, ",")
}

// lockedBuilder is stderr written from the run's goroutines.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// raceEnabled is set under the race detector (race_test.go).
var raceEnabled bool
