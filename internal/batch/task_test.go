package batch

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ask-cli/ask/internal/settings"
)

func TestParseTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		err        string // part of the error; "" for none
		check      func(t *testing.T, task Task)
	}{
		{name: "minimal", line: `{"id":"a","prompt":"hi"}`, check: func(t *testing.T, task Task) {
			if task.ID != "a" || task.Prompt != "hi" || task.Line != 7 {
				t.Errorf("got %+v", task)
			}
		}},
		{name: "settings by flag name", line: `{"id":"a","prompt":"hi","model":"m1","max-steps":3,"timeout":"90s","workdir":"sub","no-tools":true,"deny-tool":["shell"],"temperature":0.5}`,
			check: func(t *testing.T, task Task) {
				s := task.Settings
				if s.Model.Value != "m1" || s.MaxSteps.Value != 3 || s.Timeout.Value != 90*time.Second || s.Workdir.Value != "sub" ||
					!s.NoTools.Value || len(s.Deny.Value) != 1 || s.Temperature.Value != 0.5 {
					t.Errorf("got %+v", s)
				}
				if s.Model.Source != "task line 7" {
					t.Errorf("source %q", s.Model.Source)
				}
			}},
		{name: "config key spelling", line: `{"id":"a","prompt":"hi","max_steps":2}`, check: func(t *testing.T, task Task) {
			if task.Settings.MaxSteps.Value != 2 {
				t.Errorf("max_steps not read: %+v", task.Settings.MaxSteps)
			}
		}},
		{name: "not json", line: `{"id":"a",`, err: "line 7: not valid JSON"},
		{name: "not an object", line: `["a"]`, err: "want a JSON object"},
		{name: "no id", line: `{"prompt":"hi"}`, err: `no "id"`},
		{name: "id not a string", line: `{"id":1,"prompt":"hi"}`, err: "id: want a string, got 1"},
		{name: "empty prompt", line: `{"id":"a","prompt":"  "}`, err: "prompt: empty"},
		{name: "no prompt", line: `{"id":"a"}`, err: `no "prompt"`},
		{name: "unknown key", line: `{"id":"a","prompt":"hi","max-step":3}`, err: `unknown key "max-step": did you mean "max-steps"?`},
		{name: "not a setting of a task", line: `{"id":"a","prompt":"hi","json":true}`, err: `unknown key "json"`},
		{name: "key twice", line: `{"id":"a","prompt":"hi","model":"x","model":"y"}`, err: `key "model" appears twice`},
		{name: "two spellings", line: `{"id":"a","prompt":"hi","max-steps":1,"max_steps":2}`, err: `keys "max-steps" and "max_steps" are the same setting`},
		{name: "wrong kind", line: `{"id":"a","prompt":"hi","max-steps":"3"}`, err: `max-steps: want a whole number, got "3"`},
		{name: "fraction for int", line: `{"id":"a","prompt":"hi","max-steps":1.5}`, err: "want a whole number, got 1.5"},
		{name: "bad duration", line: `{"id":"a","prompt":"hi","timeout":"soon"}`, err: `timeout: "soon": give a duration`},
		{name: "bad choice", line: `{"id":"a","prompt":"hi","mode":"yolo"}`, err: `mode: "yolo": choose`},
		{name: "out of range", line: `{"id":"a","prompt":"hi","max-steps":0}`, err: "max-steps: must be at least 1"},
		{name: "null", line: `{"id":"a","prompt":"hi","model":null}`, err: "null is not a setting"},
		{name: "list of numbers", line: `{"id":"a","prompt":"hi","deny-tool":[1]}`, err: "want a list of strings"},
		{name: "text after", line: `{"id":"a","prompt":"hi"} {}`, err: "unexpected text after"},
		{name: "error names the id", line: `{"id":"x1","prompt":"hi","mode":1}`, err: "mode: want a string, got 1", check: func(t *testing.T, task Task) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			task, err := ParseTask([]byte(tt.line), 7)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				tt.check(t, task)
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want one with %q", err, tt.err)
			}
			var le *LineError
			if !errors.As(err, &le) || le.Line != 7 {
				t.Errorf("not a LineError of line 7: %#v", err)
			}
			if tt.name == "error names the id" && le.ID != "x1" {
				t.Errorf("the error's id is %q, want x1", le.ID)
			}
		})
	}
}

// FuzzParseTask: any line is a task or a one-line error of its line, and a
// task has an id and a prompt.
func FuzzParseTask(f *testing.F) {
	for _, s := range []string{`{"id":"a","prompt":"hi"}`, `{"id":"a","prompt":"hi","max-steps":3,"timeout":"1s","deny-tool":["x"]}`,
		`{"id":"a","id":"b"}`, `[]`, `{`, `{"id":"a","prompt":"p","temperature":1e400}`, "{\"id\":\"\u2028\",\"prompt\":\"x\"}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		task, err := ParseTask(line, 3)
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line != 3 {
				t.Fatalf("not a LineError: %v", err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") && utf8.ValidString(msg) {
				t.Fatalf("error of more than one line: %q", msg)
			}
			return
		}
		if task.ID == "" || strings.TrimSpace(task.Prompt) == "" {
			t.Fatalf("a task without id or prompt: %+v", task)
		}
	})
}

// The command line's settings kept for --resume read back as they were.
func TestSettingsRoundTrip(t *testing.T) {
	t.Parallel()
	var v settings.Values
	for name, val := range map[string]any{"model": "m1", "max-steps": 7, "timeout": 90 * time.Second, "yes": true,
		"deny-tool": []string{"run_command"}, "temperature": 0.5} {
		if err := v.Set(name, val, "flag --"+name); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := EncodeSettings(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeSettings(raw, "kept")
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if back.Model.Value != "m1" || back.MaxSteps.Value != 7 || back.Timeout.Value != 90*time.Second || !back.Yes.Value ||
		!slices.Equal(back.Deny.Value, []string{"run_command"}) || back.Temperature.Value != 0.5 || back.Model.Source != "kept" {
		t.Errorf("read back %s as %+v", raw, back)
	}
	if back.Provider.IsGiven() {
		t.Errorf("a setting not given came back given")
	}
	for _, bad := range []string{`{"max-steps":"7"}`, `{"nope":1}`, `[1]`, `{"mode":"wild"}`} {
		if _, err := DecodeSettings(json.RawMessage(bad), "kept"); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func FuzzDecodeSettings(f *testing.F) {
	for _, s := range []string{`{}`, `{"model":"m","timeout":"1s","deny-tool":["x"]}`, `{"max-steps":-1}`, `null`, `{"yes":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := DecodeSettings(data, "kept")
		if err != nil {
			return
		}
		// What was read encodes, and reads back to the same.
		raw, err := EncodeSettings(v)
		if err != nil {
			t.Fatal(err)
		}
		again, err := DecodeSettings(raw, "kept")
		if err != nil {
			t.Fatalf("%s read back: %v", raw, err)
		}
		raw2, _ := EncodeSettings(again)
		if string(raw) != string(raw2) {
			t.Fatalf("%s, then %s", raw, raw2)
		}
	})
}
