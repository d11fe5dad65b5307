package policy

import (
	"context"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// Under --safe, a command confined by a working sandbox runs without a
// question in agent mode; writes stay refused, deny rules still hold, and
// an unconfined command is refused saying why the sandbox cannot help.
func TestSafeLetsSandboxedCommandsRun(t *testing.T) {
	confined := []tools.Tool{
		fakeTool{tools.Info{Name: "read_file", Risk: tools.Read}},
		fakeTool{tools.Info{Name: "write_file", Risk: tools.Write, Sandboxed: true}},
		fakeTool{tools.Info{Name: "shell", Risk: tools.Exec, RequiresApproval: true, Sandboxed: true}},
		fakeTool{tools.Info{Name: "mcp_x__run", Risk: tools.Exec, RequiresApproval: true}},
	}
	calls := []providers.ToolCall{
		{ID: "1", Name: "write_file", Arguments: `{}`},
		{ID: "2", Name: "shell", Arguments: `{"command":"go test ./..."}`},
		{ID: "3", Name: "mcp_x__run", Arguments: `{}`},
	}
	p := New(ModeAgent, true, false, nil, nil, nil, confined)
	p.NoSandbox = "cannot cut off the network here"
	var names []string
	for _, d := range p.Declared(confined) {
		names = append(names, d.Info().Name)
	}
	if got := strings.Join(names, ","); got != "read_file,shell" {
		t.Errorf("declared %s, want read_file,shell", got)
	}
	v := p.Check(context.Background(), calls)
	if v[0].Allowed || !v[0].Refusal {
		t.Errorf("write under --safe: %+v, want a refusal", v[0])
	}
	if !v[1].Allowed {
		t.Errorf("sandboxed shell under --safe: %+v, want it to run without a question", v[1])
	}
	if v[2].Allowed || !v[2].Refusal || v[2].Reason != "refused by --safe: mcp_x__run runs commands and the sandbox cannot cut off the network here" {
		t.Errorf("unconfined command under --safe: %+v", v[2])
	}

	deny, _ := ParsePatterns([]string{"shell:go *"})
	if v := New(ModeAgent, true, false, nil, deny, nil, confined).Check(context.Background(), calls[1:2]); v[0].Allowed {
		t.Errorf("a deny rule must hold in the sandbox: %+v", v[0])
	}
	if v := New(ModePlan, true, false, nil, nil, nil, confined).Check(context.Background(), calls[1:2]); v[0].Allowed {
		t.Errorf("plan mode runs no commands, sandbox or not: %+v", v[0])
	}
	// Without --safe the sandbox changes nothing: the shell still asks.
	if v := New(ModeAgent, false, false, nil, nil, nil, confined).Check(context.Background(), calls[1:2]); v[0].Allowed {
		t.Errorf("without --safe and without a terminal, shell must need approval: %+v", v[0])
	}
}
