package settings

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestEntryShown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		value any
		want  string
	}{
		{nil, "-"},
		{[]string{}, "-"},
		{[]string{"read_file", "bash(git *)"}, "read_file, bash(git *)"},
		{map[string]string{}, "-"},
		{map[string]string{"sonnet": "claude-sonnet-4", "fast": "gpt-4.1-mini"}, "fast=gpt-4.1-mini, sonnet=claude-sonnet-4"},
		{3, "3"},
		{true, "true"},
		{"openai", "openai"},
	} {
		if got := (Entry{Name: "x", Value: tt.value}).Shown(); got != tt.want {
			t.Errorf("Shown(%#v) = %q, want %q", tt.value, got, tt.want)
		}
	}
}

// The object keeps the entries' order, which a map would not.
func TestEntriesJSONKeepsOrder(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(Entries{
		{Name: "provider", Value: "openai", Source: "flag --provider"},
		{Name: "model", Value: nil, Source: "none: name one with --model"},
		{Name: "allow-tool", Value: []string{"a<b"}, Source: "default"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"provider":{"value":"openai","source":"flag --provider"},"model":{"value":null,"source":"none: name one with --model"},"allow-tool":{"value":["a\u003cb"],"source":"default"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if b, _ := json.Marshal(Entries{}); string(b) != "{}" {
		t.Errorf("no entries: %s, want {}", b)
	}
}

func TestConfigKeysListsEveryKeyWrapped(t *testing.T) {
	t.Parallel()
	text := ConfigKeys()
	for _, line := range strings.Split(text, "\n") {
		if len(line) > 78 {
			t.Errorf("line of %d characters: %q", len(line), line)
		}
	}
	for _, r := range Rows() {
		if r.Key != "" && !strings.Contains(text, " "+r.Key+",") && !strings.Contains(text, " "+r.Key+"\n") {
			t.Errorf("key %s is not listed", r.Key)
		}
	}
	if !strings.HasSuffix(text, `tools.allow is {"tools": {"allow": [PATTERN...]}})`) {
		t.Errorf("the note on dotted keys is missing: %q", text)
	}
}
