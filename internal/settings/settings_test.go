package settings

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOver checks the one precedence every layer follows: a setting a
// higher layer gives wins, one it does not give falls through, and the
// deny rules of every layer add up, lower first.
func TestOver(t *testing.T) {
	t.Parallel()
	var file, flags Values
	file.Mode = Given("plan", "config c.json")
	file.MaxSteps = Given(12, "config c.json")
	file.Allow = Given([]string{"read_file"}, "config c.json")
	file.Deny = Given([]string{"shell:rm*"}, "config c.json")
	flags.Mode = Given("agent", "flag --mode")
	flags.Allow = Given([]string{"shell"}, "flag --allow-tool")
	flags.Deny = Given([]string{"write_file"}, "flag --deny-tool")
	got := Over(flags, Over(file, Defaults()))
	tests := []struct {
		name       string
		value, src any
		want, from any
	}{
		{"mode: the flag wins", got.Mode.Value, got.Mode.Source, "agent", "flag --mode"},
		{"max-steps: the file's falls through", got.MaxSteps.Value, got.MaxSteps.Source, 12, "config c.json"},
		{"timeout: the default's", got.Timeout.Value, got.Timeout.Source, DefaultTimeout, "default"},
		{"allow: replaced", strings.Join(got.Allow.Value, ","), got.Allow.Source, "shell", "flag --allow-tool"},
	}
	for _, tt := range tests {
		if tt.value != tt.want || tt.src != tt.from {
			t.Errorf("%s: %v from %q, want %v from %q", tt.name, tt.value, tt.src, tt.want, tt.from)
		}
	}
	if !slices.Equal(got.Deny.Value, []string{"shell:rm*", "write_file"}) || got.Deny.Source != "config c.json, flag --deny-tool" {
		t.Errorf("deny %q from %q, want the file's and the flag's", got.Deny.Value, got.Deny.Source)
	}
	// An empty lower list adds nothing to the source.
	var none Values
	none.Deny = Given([]string{"x"}, "flag --deny-tool")
	if d := Over(none, Defaults()).Deny; d.Source != "flag --deny-tool" {
		t.Errorf("deny over the default's empty list from %q", d.Source)
	}
}

func TestSetAndGet(t *testing.T) {
	t.Parallel()
	var v Values
	if err := v.Set("timeout", 2*time.Minute, "env X"); err != nil {
		t.Fatal(err)
	}
	if got, src, ok := v.Get("timeout"); !ok || got != 2*time.Minute || src != "env X" {
		t.Errorf("Get(timeout) = %v, %q, %v", got, src, ok)
	}
	if err := v.Set("timeout", "2m", "env X"); err == nil {
		t.Error("a string was taken for a duration")
	}
	if err := v.Set("json", true, "flag --json"); err == nil {
		t.Error("a flag about the invocation was taken for a setting")
	}
	if err := v.Set("nope", 1, "x"); err == nil {
		t.Error("a setting no row declares was set")
	}
}

// TestRows checks what the flags, the config file and help rely on: names
// and config keys unique, every setting's default of its kind, and the
// checks saying what is wrong in the words a config error uses.
func TestRows(t *testing.T) {
	t.Parallel()
	names, keys := map[string]bool{}, map[string]bool{}
	for _, r := range Rows() {
		for _, n := range []string{r.Name, r.Short} {
			if n != "" && names[n] {
				t.Errorf("the name %q is declared twice", n)
			}
			names[n] = true
		}
		if r.Key != "" && keys[r.Key] {
			t.Errorf("the config key %q is declared twice", r.Key)
		}
		keys[r.Key] = true
		if r.Category == "" && !r.ConfigOnly {
			t.Errorf("%s has no category: help and the man page cannot place it", r.Name)
		}
		if r.IsSetting() && r.Default != nil {
			var v Values
			if err := v.Set(r.Name, r.Default, "default"); err != nil {
				t.Errorf("%s: its default does not fit: %v", r.Name, err)
			}
		}
	}
	mode, _ := Lookup("mode")
	if msg := mode.Check("yolo"); msg != `"yolo": choose ask, plan or agent` {
		t.Errorf("mode's check: %q", msg)
	}
	steps, _ := Lookup("max-steps")
	if steps.Check(0) == "" || steps.Check(1) != "" {
		t.Error("max-steps must be at least 1")
	}
}

// overByCopy is Over as it was written before Cover: the higher layer
// copied whole, then each row it does not give taken from the lower one.
// Cover must give the same for every row and every pair of layers.
func overByCopy(hi, lo Values) Values {
	out := hi
	for _, r := range Rows() {
		if !r.IsSetting() {
			continue
		}
		h, l := r.slot(&out), r.slot(&lo)
		switch {
		case !l.given():
		case !h.given():
			h.set(l.value(), l.source())
		case r.Adds && len(l.value().([]string)) > 0:
			if len(h.value().([]string)) == 0 {
				h.set(l.value(), l.source())
				break
			}
			h.set(slices.Concat(l.value().([]string), h.value().([]string)), l.source()+", "+h.source())
		}
	}
	return out
}

// TestCoverIsOver is generated from the rows: for each, a lower and a
// higher layer that leave it out, give its zero value or give a sample of
// it, in every pairing.
func TestCoverIsOver(t *testing.T) {
	t.Parallel()
	for _, r := range Rows() {
		if !r.IsSetting() {
			continue
		}
		// The two layers' samples differ where the row has two, so that
		// which one wins shows; lists differ always, so that their order
		// shows.
		good := r.Samples().Good
		lowSample, err := r.Parse(good[0])
		if err != nil {
			t.Fatalf("%s: its sample %q: %v", r.Name, good[0], err)
		}
		highSample, err := r.Parse(good[len(good)-1])
		if err != nil {
			t.Fatalf("%s: its sample %q: %v", r.Name, good[len(good)-1], err)
		}
		if list, ok := highSample.([]string); ok {
			highSample = append(slices.Clone(list), "higher")
		}
		zero := r.slot(&Values{}).value()
		layer := func(v any, source string) Values {
			var vs Values
			if v != nil {
				if err := r.slot(&vs).set(v, source); err != nil {
					t.Fatal(err)
				}
			}
			return vs
		}
		for _, lo := range []any{nil, zero, lowSample} {
			for _, hi := range []any{nil, zero, highSample} {
				lower, higher := layer(lo, "lower"), layer(hi, "higher")
				want := overByCopy(higher, lower)
				got := lower
				got.Cover(&higher)
				g, w := r.slot(&got), r.slot(&want)
				if !reflect.DeepEqual(g.value(), w.value()) || g.source() != w.source() {
					t.Errorf("%s, %v over %v: %v from %q, want %v from %q", r.Name, hi, lo, g.value(), g.source(), w.value(), w.source())
				}
			}
		}
	}
}
