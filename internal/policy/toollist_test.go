package policy

import (
	"slices"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

func TestToolList(t *testing.T) {
	t.Parallel()
	pats, unread := ToolList([]string{"Read", "Bash(git diff:*)", "shell:go test*", "Edit", "mcp__fs__*", "Bash", "WebFetch(", "bad name"})
	want := []string{"read_file", "shell:git diff*", "shell:go test*", "edit_file", "mcp__fs__*", "shell"}
	if got := Strings(pats); !slices.Equal(got, want) {
		t.Errorf("patterns = %q, want %q", got, want)
	}
	if !slices.Equal(unread, []string{"WebFetch(", "bad name"}) {
		t.Errorf("unread = %q", unread)
	}
}

func TestWithin(t *testing.T) {
	t.Parallel()
	pats, _ := ToolList([]string{"Read", "Bash(git diff:*)", "Bash(git log:*)"})
	call := func(name, args string) providers.ToolCall { return providers.ToolCall{Name: name, Arguments: args} }
	for _, tt := range []struct {
		call providers.ToolCall
		want bool
	}{
		{call("read_file", `{"path":"a"}`), true},
		{call("write_file", `{"path":"a","content":"x"}`), false},
		{call("shell", `{"command":"git diff HEAD"}`), true},
		{call("shell", `{"command":"git diff && git log -1"}`), true},
		{call("shell", `{"command":"git diff; rm -rf ."}`), false},
		{call("shell", `{"command":"git diff $(rm -rf .)"}`), false},
		{call("shell", `{"command":"rm -rf ."}`), false},
	} {
		if got := Within(pats, tt.call); got != tt.want {
			t.Errorf("Within(%s %s) = %v, want %v", tt.call.Name, tt.call.Arguments, got, tt.want)
		}
	}
	if Within(nil, call("read_file", `{"path":"a"}`)) {
		t.Error("an empty list covers a call")
	}
}
