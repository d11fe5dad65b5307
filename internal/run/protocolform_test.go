package run

import (
	"testing"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers/textproto"
	"github.com/ask-cli/ask/internal/settings"
)

func TestProtocolForm(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		provider, choice string
		want             textproto.Form
		wantErr          string
	}{
		{"openai", "", "", ""},
		{"openai", ToolProtocolNative, "", ""},
		{"openai", ToolProtocolJSON, textproto.JSON, ""},
		{"anthropic", ToolProtocolMarkdown, textproto.Markdown, ""},
		{"command", ToolProtocolAuto, textproto.JSON, ""},
		{"command", ToolProtocolNative, "", "--tool-protocol native: command has no native tool calling; use json or markdown"},
		{"openai", "xml", "", `--tool-protocol "xml": choose auto, native, json or markdown`},
	} {
		s := Settings{Values: settings.Values{Provider: Given(tt.provider, "test"), ToolProtocol: Given(tt.choice, "test")}}
		prov, proto, form, err := s.ProtocolForm()
		if tt.wantErr != "" {
			if kind, _ := fault.KindOf(err); err == nil || err.Error() != tt.wantErr || kind != fault.Usage {
				t.Errorf("%s %q: %v, want the usage error %q", tt.provider, tt.choice, err, tt.wantErr)
			}
			continue
		}
		if err != nil || prov.Name != tt.provider || proto == nil || form != tt.want {
			t.Errorf("%s %q: %s, %v, form %q, %v; want form %q", tt.provider, tt.choice, prov.Name, proto, form, err, tt.want)
		}
	}
	if _, _, _, err := (Settings{Values: settings.Values{Provider: Given("nobody", "test")}}).ProtocolForm(); err == nil {
		t.Error("an unknown provider has a protocol")
	}
}
