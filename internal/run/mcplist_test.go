package run

import (
	"testing"

	"github.com/ask-cli/ask/internal/fault"
)

func TestMCPFailures(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		entries  []MCPEntry
		wantMsg  string
		wantCode int
	}{
		{"none", nil, "", fault.ExitOK},
		{"all listed", []MCPEntry{{Name: "a"}, {Name: "b"}}, "", fault.ExitOK},
		{"one failed", []MCPEntry{{Name: "a"}, {Name: "b", Error: "exit status 1"}}, "mcp list: 1 of the servers failed to list their tools", fault.ExitFailure},
		{"credentials refused", []MCPEntry{{Name: "a", Error: "exit status 1"}, {Name: "b", Error: "401", AuthFailed: true}},
			"mcp list: 2 of the servers failed to list their tools", fault.ExitAuth},
	} {
		err := MCPFailures(tt.entries)
		if tt.wantMsg == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", tt.name, err)
			}
			continue
		}
		if err == nil || err.Error() != tt.wantMsg {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.wantMsg)
			continue
		}
		if code := ExitCode(err); code != tt.wantCode {
			t.Errorf("%s: exit %d, want %d", tt.name, code, tt.wantCode)
		}
	}
}
