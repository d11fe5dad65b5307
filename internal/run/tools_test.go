package run

import (
	"encoding/json"
	"testing"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

func TestToolDeclarations(t *testing.T) {
	t.Parallel()
	params := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)
	r := &Run{Mode: "ask", Declared: []providers.Tool{
		{Name: "read_file", Description: "read a file", Parameters: params},
		{Name: "now", Description: "the time"},
	}, tools: map[string]tools.Info{"read_file": {Name: "read_file", Description: "read a file", Parameters: params, Risk: "read"}}}

	infos := r.DeclaredInfo()
	if len(infos) != 2 || infos[0].Risk != "read" || infos[1].Name != "now" || infos[1].Description != "the time" {
		t.Errorf("DeclaredInfo = %+v, want read_file with its risk, then now", infos)
	}
	info, err := r.ToolDeclaration("now")
	if err != nil || string(info.Parameters) != string(providers.EmptyParameters) {
		t.Errorf("now: %+v, %v; want its parameters an empty object", info, err)
	}
	if info, err := r.ToolDeclaration("read_file"); err != nil || string(info.Parameters) != string(params) {
		t.Errorf("read_file: %+v, %v", info, err)
	}

	for _, tt := range []struct {
		name string
		run  *Run
		want string
	}{
		{"not offered", r, `no tool "bash" is offered in mode ask with these flags: choose one of read_file, now`},
		{"none offered", &Run{Mode: "answer"}, `no tool "bash": no tools are offered in mode answer with these flags`},
	} {
		_, err := tt.run.ToolDeclaration("bash")
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if kind, ok := fault.KindOf(err); !ok || kind != fault.Usage {
			t.Errorf("%s: not a usage error (exit 2)", tt.name)
		}
	}
}
