package table

import (
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/settings"
)

func TestSettings(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	err := Settings(&b, "/home/me/.config/ask/config.json (not found)", []settings.Entry{
		{Name: "provider", Value: "openai", Source: "flag --provider"},
		{Name: "allow-tool", Value: []string{"read_file", "bash(git *)"}, Source: "config /c.json"},
		{Name: "model", Value: nil, Source: "none: name one with --model"},
		{Name: "evil", Value: "\x1b]52;c;aGk=\a", Source: "env EVIL"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `config file: /home/me/.config/ask/config.json (not found)

SETTING     VALUE                   SOURCE
provider    openai                  flag --provider
allow-tool  read_file, bash(git *)  config /c.json
model       -                       none: name one with --model
evil        \u001b]52;c;aGk=\u0007  env EVIL
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
