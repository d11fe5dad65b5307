package settings

import (
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
