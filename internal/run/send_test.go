package run

import (
	"testing"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/settings"
)

func TestForSending(t *testing.T) {
	t.Parallel()
	body := []byte(`{"model":"gpt-from-body","messages":[]}`)
	for _, tt := range []struct {
		name      string
		model     Setting[string]
		body      []byte
		wantModel string
		wantSrc   string
	}{
		{"the body names the model", Given("gpt-from-config", "config /c.json"), body, "gpt-from-body", "the request body"},
		{"a typed --model wins", Given("gpt-typed", "flag --model"), body, "gpt-typed", "flag --model"},
		{"a body without one", Given("gpt-from-config", "config /c.json"), []byte(`{"contents":[]}`), "gpt-from-config", "config /c.json"},
	} {
		s := Settings{Values: settings.Values{Provider: Given("openai", "test"), Model: tt.model}}
		prov, got, err := s.ForSending(tt.body)
		if err != nil || prov.Name != "openai" {
			t.Fatalf("%s: %s, %v", tt.name, prov.Name, err)
		}
		if got.Model.Value != tt.wantModel || got.Model.Source != tt.wantSrc {
			t.Errorf("%s: model %q from %q, want %q from %q", tt.name, got.Model.Value, got.Model.Source, tt.wantModel, tt.wantSrc)
		}
		if !got.NoTools.Value {
			t.Errorf("%s: a send declares tools", tt.name)
		}
	}
	s := Settings{Values: settings.Values{Provider: Given("command", "test")}}
	_, _, err := s.ForSending(body)
	want := "command runs a local program, not an HTTP API: there is nothing to send a body to"
	if kind, _ := fault.KindOf(err); err == nil || err.Error() != want || kind != fault.Usage {
		t.Errorf("command: %v, want the usage error %q", err, want)
	}
}

// With a config file that cannot be read, help shows the built-in
// defaults; the commands that need settings report the file.
func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg := &Config{Path: "/broken.json", Err: fault.Usagef("/broken.json: line 1: unexpected end")}
	getenv := env(map[string]string{"ASK_MODEL": "gpt-from-env"})
	if _, err := Resolve(Inputs{Getenv: getenv, Config: cfg}); err == nil {
		t.Fatal("a broken config file resolves")
	}
	s := Defaults(Inputs{Getenv: getenv, Config: cfg})
	if s.Model.Value == "gpt-from-env" || s.Mode.Value != "agent" || s.MaxSteps.Value != settings.DefaultMaxSteps {
		t.Errorf("model %q, mode %q, max steps %d: want the built-in defaults", s.Model.Value, s.Mode.Value, s.MaxSteps.Value)
	}
	if s := Defaults(Inputs{Getenv: getenv}); s.Model.Value != "gpt-from-env" {
		t.Errorf("model %q, want the environment's", s.Model.Value)
	}
}
