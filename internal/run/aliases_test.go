package run

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/config"
)

// A model alias from the config file stands for its model wherever the
// model is named (a flag, the environment, the file), says so in the
// model's source, and a profile's alias replaces the top level's.
func TestModelAliases(t *testing.T) {
	t.Parallel()
	const file = `{"provider": "openai", "model": "smart",
 "aliases": {"fast": "gpt-4.1-mini", "smart": "gpt-4.1"},
 "profiles": {"cheap": {"aliases": {"smart": "gpt-4.1-nano"}}}}`
	tests := []struct {
		name, profile string
		flag          string
		vars          map[string]string
		want          string
		wantSource    string
	}{
		{"flag", "", "fast", nil, "gpt-4.1-mini", `flag --model, alias "fast" in config /c.json`},
		{"config model", "", "", nil, "gpt-4.1", `config /c.json, alias "smart" in config /c.json`},
		{"environment", "", "", map[string]string{"ASK_MODEL": "fast"}, "gpt-4.1-mini", `env ASK_MODEL, alias "fast"`},
		{"profile replaces", "cheap", "smart", nil, "gpt-4.1-nano", `alias "smart" in config /c.json:cheap`},
		{"not an alias", "", "o3", nil, "o3", "flag --model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := Inputs{Getenv: env(tt.vars), Config: configFrom(t, "/c.json", file, tt.profile), Wd: "/w"}
			if tt.flag != "" {
				in.Flags.Model = Given(tt.flag, "flag --model")
			}
			s, err := Resolve(in)
			if err != nil {
				t.Fatal(err)
			}
			if s.Model.Value != tt.want || !strings.Contains(s.Model.Source, tt.wantSource) {
				t.Errorf("model %+v, want %q from %q", s.Model, tt.want, tt.wantSource)
			}
			var shown Entry
			for _, e := range s.Entries() {
				if e.Name == "aliases" {
					shown = e
				}
			}
			if m, _ := shown.Value.(map[string]string); len(m) != 2 || !strings.HasPrefix(shown.Source, "config /c.json") {
				t.Errorf("ask config shows aliases %+v", shown)
			}
		})
	}
}

// An alias without a model is an error at its line and column.
func TestAliasErrors(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"{\n \"aliases\": {\"fast\": \"\"}}": `/c.json:2:14: aliases.fast: is empty`,
		`{"aliases": {"fast": 3}}`:           `/c.json:1:14: aliases.fast: want a string`,
		`{"aliases": ["fast"]}`:              `/c.json:1:2: aliases: want`,
	} {
		_, err := config.Parse("/c.json", []byte(text), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", text, err, want)
		}
	}
	if f, err := config.Parse("/c.json", []byte(`{"aliases": {}}`), nil); err != nil || !reflect.DeepEqual(f.Aliases, map[string]string{}) {
		t.Errorf("an empty aliases object: %v, %v", f, err)
	}
}
