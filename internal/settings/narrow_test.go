package settings

import (
	"errors"
	"slices"
	"testing"
	"time"
)

// commandLine is the defaults with the row's Over sample given by the
// command line, as a lower layer meets it.
func commandLine(t *testing.T, r Row) Values {
	t.Helper()
	upper := Defaults()
	if over := r.Samples().Over; over != "" {
		if err := upper.Give(r.Name, over, "flag --"+r.Name); err != nil {
			t.Fatalf("%s: the sample %q: %v", r.Name, over, err)
		}
	}
	return upper
}

// TestNarrowRefusesEveryWideningRow is generated from the rows: a lower
// layer giving a widening row's Wide sample is refused, naming the key and
// the layer, and leaves the command line's settings as they were; the
// command line's own value is never refused.
func TestNarrowRefusesEveryWideningRow(t *testing.T) {
	t.Parallel()
	marked := 0
	for _, r := range Rows() {
		if !r.IsSetting() || !r.Widening() {
			continue
		}
		marked++
		s := r.Samples()
		if s.Wide == "" {
			t.Errorf("%s is marked widening but has no Wide sample", r.Name)
			continue
		}
		upper := commandLine(t, r)
		got, err := Narrow(upper, Layer{r.Name: s.Wide}, "task line 7")
		var we *WideningError
		if !errors.As(err, &we) || we.Key != r.Name || we.Source != "task line 7" {
			t.Errorf("%s=%q over %q: err %v, want a WideningError naming %s and the task line", r.Name, s.Wide, s.Over, err, r.Name)
			continue
		}
		if v, _, _ := got.Get(r.Name); !equal(v, r.slot(&upper).value()) {
			t.Errorf("%s: a refused layer changed the setting to %v", r.Name, v)
		}
		// The command line's own value, given again below it, narrows
		// nothing away and widens nothing.
		if own := r.slot(&upper).value(); r.Kind != List || len(own.([]string)) > 0 {
			if _, err := Narrow(upper, Layer{r.Name: own}, "task line 7"); err != nil {
				t.Errorf("%s: the command line's own value %v refused: %v", r.Name, own, err)
			}
		}
	}
	if marked < 20 {
		t.Errorf("only %d rows are marked widening", marked)
	}
}

// TestNarrowTakesEveryRowsGoodValues: no good sample of a row that is not
// marked widening is refused below the command line.
func TestNarrowTakesEveryRowsGoodValues(t *testing.T) {
	t.Parallel()
	for _, r := range Rows() {
		if !r.IsSetting() || r.Widening() {
			continue
		}
		for _, good := range r.Samples().Good {
			got, err := Narrow(Defaults(), Layer{r.Name: good}, "task line 1")
			if err != nil {
				t.Errorf("%s=%q refused: %v", r.Name, good, err)
				continue
			}
			if _, src, _ := got.Get(r.Name); src != "task line 1" && !r.Adds {
				t.Errorf("%s=%q: the setting comes from %q", r.Name, good, src)
			}
		}
	}
}

// TestNarrowRules checks how each kind of mark lays a lower layer over the
// command line's settings.
func TestNarrowRules(t *testing.T) {
	t.Parallel()
	upper := Defaults()
	for name, v := range map[string]any{
		"mode": "plan", "max-steps": 10, "timeout": "5m", "allow-tool": []string{"shell:git *", "read_file"},
		"deny-tool": []string{"shell:rm*"}, "allow-host": []string{"proxy.golang.org"}, "safe": true,
		"workdir": "/work/proj", "max-budget-usd": 2.0,
	} {
		if err := upper.Give(name, v, "flag --"+name); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		lower Layer
		key   string // the key refused, "" for none
	}{
		{"a stricter mode", Layer{"mode": "ask"}, ""},
		{"a looser mode", Layer{"mode": "agent"}, "mode"},
		{"fewer steps", Layer{"max-steps": 3}, ""},
		{"more steps", Layer{"max-steps": 11}, "max-steps"},
		{"a shorter timeout", Layer{"timeout": "1m"}, ""},
		{"no timeout", Layer{"timeout": "0s"}, "timeout"},
		{"a smaller budget", Layer{"max-budget-usd": 1.5}, ""},
		{"a bigger budget", Layer{"max-budget-usd": 3}, "max-budget-usd"},
		{"some of the allow rules", Layer{"allow-tool": []any{"read_file"}}, ""},
		{"no allow rule", Layer{"allow-tool": []any{}}, ""},
		{"a new allow rule", Layer{"allow-tool": []any{"read_file", "shell"}}, "allow-tool"},
		{"a wider allow rule", Layer{"allow-tool": []any{"shell:git*"}}, "allow-tool"},
		{"more deny rules", Layer{"deny-tool": []any{"shell:curl *"}}, ""},
		{"a host of the command line's", Layer{"allow-host": []any{"proxy.golang.org"}}, ""},
		{"another host", Layer{"allow-host": []any{"evil.example"}}, "allow-host"},
		{"--safe again", Layer{"safe": true}, ""},
		{"--safe off", Layer{"safe": false}, "safe"},
		{"--yes", Layer{"yes": true}, "yes"},
		{"--yes off", Layer{"yes": false}, ""},
		{"the sandbox off under --safe's upper", Layer{"sandbox": "off"}, ""},
		{"the command provider", Layer{"provider": "command"}, "provider"},
		{"another provider", Layer{"provider": "anthropic"}, ""},
		{"a command", Layer{"command": "sh -c 'id'"}, "command"},
		{"a file inside", Layer{"attach": []any{"docs/a.png"}}, ""},
		{"a file outside", Layer{"attach": []any{"../secret.pdf"}}, "attach"},
		{"an absolute file", Layer{"attach": []any{"/etc/passwd"}}, "attach"},
		{"a directory inside", Layer{"workdir": "sub"}, ""},
		{"the command line's directory", Layer{"workdir": "/work/proj"}, ""},
		{"a directory outside", Layer{"workdir": "/"}, "workdir"},
		{"a directory up", Layer{"workdir": ".."}, "workdir"},
		{"an inline schema", Layer{"schema": `{"type":"object"}`}, ""},
		{"a schema file outside", Layer{"schema": "/etc/shadow"}, "schema"},
		{"several keys, one widening", Layer{"model": "m", "no-hooks": true}, "no-hooks"},
	}
	for _, tt := range tests {
		got, err := Narrow(upper, tt.lower, "skill review")
		var we *WideningError
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%s: refused: %v", tt.name, err)
		case tt.key != "" && (!errors.As(err, &we) || we.Key != tt.key || we.Source != "skill review"):
			t.Errorf("%s: err %v, want %s refused", tt.name, err, tt.key)
		}
		if tt.name == "more deny rules" && !slices.Equal(got.Deny.Value, []string{"shell:rm*", "shell:curl *"}) {
			t.Errorf("deny rules %q: want the command line's and the layer's", got.Deny.Value)
		}
		if tt.name == "some of the allow rules" && !slices.Equal(got.Allow.Value, []string{"read_file"}) {
			t.Errorf("allow rules %q: want the layer's, fewer", got.Allow.Value)
		}
		if tt.name == "fewer steps" && (got.MaxSteps.Value != 3 || got.MaxSteps.Source != "skill review") {
			t.Errorf("max-steps %d from %q", got.MaxSteps.Value, got.MaxSteps.Source)
		}
	}
	// A value no row takes is refused before any mark is read.
	if _, err := Narrow(upper, Layer{"max-steps": "many"}, "task line 2"); err == nil {
		t.Error("max-steps=many was taken")
	}
	if _, err := Narrow(upper, Layer{"nope": 1}, "task line 2"); err == nil {
		t.Error("an unknown key was taken")
	}
}

// TestParseForms: text (a flag's, a variable's), the kind's Go type and a
// JSON decoder's value give the same parsed value.
func TestParseForms(t *testing.T) {
	t.Parallel()
	row := func(name string) Row { r, _ := Lookup(name); return r }
	tests := []struct {
		row   string
		forms []any
		want  any
	}{
		{"max-steps", []any{"12", 12, float64(12)}, 12},
		{"timeout", []any{"90s", 90 * time.Second}, 90 * time.Second},
		{"temperature", []any{"0.5", 0.5}, 0.5},
		{"safe", []any{"true", true}, true},
		{"allow-tool", []any{"read_file", []string{"read_file"}, []any{"read_file"}}, []string{"read_file"}},
	}
	for _, tt := range tests {
		for _, f := range tt.forms {
			got, err := row(tt.row).Parse(f)
			if err != nil || !equal(got, tt.want) {
				t.Errorf("%s: Parse(%#v) = %#v, %v; want %#v", tt.row, f, got, err, tt.want)
			}
		}
	}
	for _, bad := range []any{"12.5", float64(12.5), "twelve", true, "0"} {
		if _, err := row("max-steps").Parse(bad); err == nil {
			t.Errorf("max-steps: Parse(%#v) took it", bad)
		}
	}
}

func equal(a, b any) bool {
	if la, ok := a.([]string); ok {
		lb, _ := b.([]string)
		return slices.Equal(la, lb)
	}
	return a == b
}
