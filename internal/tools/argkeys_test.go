package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckArguments(t *testing.T) {
	t.Parallel()
	shell := json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"timeout":{"type":"integer"}},"required":["command"]}`)
	open := json.RawMessage(`{"type":"object","properties":{"a":{}},"additionalProperties":true}`)
	none := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name, params, args string
		want               string // "" for accepted
	}{
		{"plain", string(shell), `{"command":"ls"}`, ""},
		{"empty", string(shell), ``, ""},
		{"not JSON is the tool's to report", string(shell), `{"command":`, ""},
		// A syntax error inside an array left the reading looping for
		// ever (found by FuzzOneReadingOfArguments).
		{"a syntax error in an array ends the reading", string(shell), `{"command":["[[[[[[[[0, "",   "`, ""},
		{"a syntax error in a nested object", string(shell), `{"command":{"a":[1 2]}}`, ""},
		{"duplicate", string(shell), `{"command":"ls","command":"rm x"}`, `key "command" appears twice`},
		{"case twin", string(shell), `{"command":"git status","Command":"touch PWN"}`, `keys "command" and "Command" differ only in case`},
		{"case twin first", string(shell), `{"COMMAND":"touch PWN","command":"ls"}`, `only in case`},
		{"kelvin sign folds to k", `{"properties":{"k":{}}}`, `{"k":1,"\u212a":2}`, `differ only in case`},
		{"case alone", string(shell), `{"Command":"touch PWN"}`, `differs from the parameter "command" only in case`},
		{"undeclared", string(shell), `{"command":"ls","cwd":"/"}`, `key "cwd" is not a parameter of this tool; the parameters are: command, timeout`},
		{"nested duplicate", `{"properties":{"edits":{}}}`, `{"edits":[{"old":"a","old":"b"}]}`, `key "old" appears twice`},
		{"nested case twin", `{"properties":{"o":{}}}`, `{"o":{"p":{"x":1,"X":2}}}`, `differ only in case`},
		{"additional allowed", string(open), `{"a":1,"b":2}`, ""},
		{"no properties listed", string(none), `{"anything":1}`, ""},
		{"no properties, still no twins", string(none), `{"x":1,"X":1}`, `differ only in case`},
		{"no schema", ``, `{"x":1}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckArguments(json.RawMessage(tt.params), tt.args)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}
