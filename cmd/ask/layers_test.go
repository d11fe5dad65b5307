package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/batch"
	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/run"
	"github.com/ask-cli/ask/internal/settings"
)

// layerResult is what one layer made of a row's value: the setting a run
// resolves, or the error.
type layerResult struct {
	value any
	err   error
}

// resolved is the value of the row in the settings the layer resolves to.
func resolved(name string, in run.Inputs, err error) layerResult {
	if err != nil {
		return layerResult{err: err}
	}
	if in.Getenv == nil {
		in.Getenv = func(string) string { return "" }
	}
	s, err := run.Resolve(in)
	if err != nil {
		return layerResult{err: err}
	}
	v, _, _ := s.Values.Get(name)
	return layerResult{value: v}
}

// viaFlag reads `ask --NAME=TEXT hi` as a run does.
func viaFlag(r settings.Row, text string) layerResult {
	stdio := &IO{Getenv: func(string) string { return "" }, Out: io.Discard, Err: io.Discard}
	line, err := readArgs(mainSpec(stdio), []string{"--" + r.Name + "=" + text, "hi"})
	if err != nil {
		return layerResult{err: err}
	}
	stdio.config = run.LoadConfig(stdio.Getenv, "")
	stdio.typed = line.typed()
	app := appWith(stdio, nil)
	var flags run.Settings
	app.Action = func(c *cli.Context) error {
		flags, err = flagSettings(c, stdio)
		return err
	}
	err = app.RunContext(context.Background(), line.argv("ask"))
	return resolved(r.Name, run.Inputs{Flags: flags}, err)
}

// viaEnv reads the row's variable set to text.
func viaEnv(r settings.Row, text string) layerResult {
	return resolved(r.Name, run.Inputs{Getenv: func(k string) string {
		if k == r.Env {
			return text
		}
		return ""
	}}, nil)
}

// jsonValue is text as a JSON layer writes a value of the row's kind: a
// text that is no value of the kind stays a string.
func jsonValue(r settings.Row, text string) any {
	switch r.Kind {
	case settings.Bool:
		if b, err := strconv.ParseBool(text); err == nil && (text == "true" || text == "false") {
			return b
		}
	case settings.Int, settings.Float:
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			return f
		}
	case settings.List:
		return []string{text}
	}
	return text
}

// viaConfig reads a config file whose (dotted) key holds the value.
func viaConfig(t *testing.T, r settings.Row, text string) layerResult {
	doc := map[string]any{}
	m, parts := doc, strings.Split(r.Key, ".")
	for _, p := range parts[:len(parts)-1] {
		m[p] = map[string]any{}
		m = m[p].(map[string]any)
	}
	m[parts[len(parts)-1]] = jsonValue(r, text)
	data, _ := json.Marshal(doc)
	path := filepath.Join(t.TempDir(), "config.json")
	os.WriteFile(path, data, 0o600)
	f, err := config.Parse(path, data, catalog.Names())
	if err != nil {
		return layerResult{err: err}
	}
	res, err := f.Resolve("")
	got := resolved(r.Name, run.Inputs{Config: &run.Config{Path: path, File: f, Resolved: res}}, err)
	if p, ok := got.value.(string); ok && r.Name == "tools-file" {
		// The file names it from where the file is, by design.
		got.value, _ = filepath.Rel(filepath.Dir(path), p)
	}
	return got
}

// viaTaskLine reads a batch task line giving the value.
func viaTaskLine(r settings.Row, text string) layerResult {
	line, _ := json.Marshal(map[string]any{"id": "a", "prompt": "p", r.Name: jsonValue(r, text)})
	task, err := batch.ParseTask(line, 1)
	return resolved(r.Name, run.Inputs{Flags: run.Settings{Values: task.Settings}}, err)
}

// TestLayersAgree is generated from the rows: each good and bad sample of
// every setting goes through each layer that can give it (flag, variable,
// config file, batch task line), and every layer gives the same verdict
// and the same parsed value.
func TestLayersAgree(t *testing.T) {
	t.Parallel()
	for _, r := range settings.Rows() {
		if !r.IsSetting() {
			continue
		}
		s := r.Samples()
		for _, tt := range []struct {
			texts []string
			good  bool
		}{{s.Good, true}, {s.Bad, false}} {
			for _, text := range tt.texts {
				got := map[string]layerResult{"task line": viaTaskLine(r, text)}
				if !r.ConfigOnly {
					got["flag"] = viaFlag(r, text)
				}
				if r.Env != "" && strings.TrimSpace(text) != "" {
					got["env "+r.Env] = viaEnv(r, text)
				}
				if r.Key != "" {
					got["config "+r.Key] = viaConfig(t, r, text)
				}
				var first *layerResult
				for layer, res := range got {
					if (res.err == nil) != tt.good {
						t.Errorf("%s %q: %s: error %v, want good=%v", r.Name, text, layer, res.err, tt.good)
					}
					if first == nil {
						first = &res
					} else if !reflect.DeepEqual(res.value, first.value) {
						t.Errorf("%s %q: the layers disagree: %v", r.Name, text, got)
					}
				}
			}
		}
	}
}

// TestWideningRowsRefusedBelowTheCommandLine is generated from the rows:
// every row marked widening is refused after the prompt (unless it is a
// limit, which the command line may set there), by settings.Narrow, and on
// a batch task line: a result line with status error and exit 2 naming the
// key, while the other tasks go on. One batch holds a task for each row,
// under a command line that gives each row's Over sample.
func TestWideningRowsRefusedBelowTheCommandLine(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	// --worktree's Over sample makes the plain task's run in a worktree of
	// a repository.
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: --worktree's sample needs a repository")
	}
	if out, err := exec.Command("git", "-C", wd, "-c", "user.name=t", "-c", "user.email=t@t", "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v: %s", err, out)
	}
	if out, err := exec.Command("git", "-C", wd, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "one").CombinedOutput(); err != nil {
		t.Fatalf("git commit: %v: %s", err, out)
	}
	args := []string{"batch", "--workdir", wd, "-m", "fake-model"}
	file := map[string]any{"prices": map[string]any{"fake-model": map[string]any{"input": 1, "output": 1}}}
	var upper settings.Values
	var lines []string
	for _, r := range settings.Rows() {
		if !r.Widening() {
			continue
		}
		s := r.Samples()
		wide, err := r.Parse(s.Wide)
		if err != nil {
			t.Fatalf("%s: the Wide sample %q: %v", r.Name, s.Wide, err)
		}
		if !r.ConfigOnly {
			_, err := readArgs(testSpec(), []string{"hello", "--" + r.Name + "=" + s.Wide})
			if refuse := r.Widens(wide) != ""; refuse != (err != nil) || refuse && !strings.Contains(err.Error(), "after the prompt could widen") {
				t.Errorf("%s=%s after the prompt: error %v, want refused=%v", r.Name, s.Wide, err, refuse)
			}
		}
		if !r.IsSetting() {
			continue
		}
		if s.Over != "" {
			if err := upper.Give(r.Name, s.Over, "flag --"+r.Name); err != nil {
				t.Fatal(err)
			}
			if r.ConfigOnly {
				sandbox, _ := file["sandbox"].(map[string]any)
				if sandbox == nil {
					sandbox = map[string]any{}
					file["sandbox"] = sandbox
				}
				sandbox[strings.TrimPrefix(r.Key, "sandbox.")] = jsonValue(r, s.Over)
			} else {
				args = append(args, "--"+r.Name+"="+s.Over)
			}
		}
		line, _ := json.Marshal(map[string]any{"id": r.Name, "prompt": "p", r.Name: jsonValue(r, s.Wide)})
		lines = append(lines, string(line))
	}
	upper = settings.Over(upper, settings.Defaults())
	for _, l := range lines {
		task, err := batch.ParseTask([]byte(l), 1)
		if err != nil {
			t.Fatal(err)
		}
		name := task.ID
		var we *settings.WideningError
		if _, err := settings.NarrowValues(upper, task.Settings); !errors.As(err, &we) || we.Key != name {
			t.Errorf("%s: settings.NarrowValues: %v, want it refused", l, err)
		}
	}

	srv := fakeprovider.Start(fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	tasks := filepath.Join(wd, "tasks.jsonl")
	os.WriteFile(tasks, []byte(strings.Join(append(lines, `{"id":"plain","prompt":"p"}`), "\n")+"\n"), 0o600)
	cfg, _ := json.Marshal(file)
	os.WriteFile(filepath.Join(wd, "config.json"), cfg, 0o600)
	res := runAsk(t, askEnv{server: srv, env: map[string]string{"ASK_CONFIG": filepath.Join(wd, "config.json")}, wd: wd}, append(args, tasks)...)
	byID := map[string]batch.Result{}
	for _, l := range readResults(t, res.stdout) {
		byID[l.ID] = l
	}
	for _, l := range lines {
		var task struct{ ID string }
		json.Unmarshal([]byte(l), &task)
		got := byID[task.ID]
		if got.Status != batch.StatusError || got.ExitCode != 2 || !strings.Contains(got.Error, fmt.Sprintf("%q would widen", task.ID)) {
			t.Errorf("the task %s: %+v", l, got)
		}
	}
	if got := byID["plain"]; got.Status != "completed" {
		t.Errorf("the task that narrows nothing: %+v; stderr %s", got, res.stderr)
	}
}
