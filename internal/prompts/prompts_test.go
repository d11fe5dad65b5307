package prompts

import (
	"strings"
	"testing"
	"time"
)

func TestSystem(t *testing.T) {
	env := Env{Date: time.Date(2026, 11, 22, 15, 0, 0, 0, time.UTC), OS: "linux", Workdir: "/src/app", Mode: "agent", Tools: true}
	tests := []struct {
		name    string
		env     Env
		extra   string
		want    []string
		notWant []string
	}{
		{"facts", env, "", []string{"You are ask, ", "2026-11-22", "linux", "/src/app", "Mode: agent", "Read a file before editing"}, []string{"ask dev", "ask v"}},
		{"extra appended last", env, "  Answer in French.  ", []string{"\n\nAnswer in French."}, nil},
		{"plan mode", Env{Mode: "plan", Tools: true}, "", []string{"numbered plan", "reply without tool calls with the plan"}, []string{"Mode: agent", "edit", "changed"}},
		{"ask mode", Env{Mode: "ask", Tools: true}, "", []string{"Mode: ask", "answer briefly"}, []string{"edit", "changed"}},
		{"no tools", Env{Mode: "agent"}, "", nil, []string{"Read a file before editing"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := System(tt.env, tt.extra)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("System() lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(got, w) {
					t.Errorf("System() has %q:\n%s", w, got)
				}
			}
			if tt.extra != "" && !strings.HasSuffix(got, strings.TrimSpace(tt.extra)) {
				t.Errorf("--system text is not last:\n%s", got)
			}
		})
	}
}

// The default prompt is sent every step; peer CLIs send tens of KB.
func TestSystemIsSmall(t *testing.T) {
	got := System(Env{Date: time.Now(), OS: "linux", Workdir: strings.Repeat("d", 100), Mode: "agent", Tools: true}, "")
	if len(got) > 1200 {
		t.Errorf("default system prompt is %d bytes, want at most 1200", len(got))
	}
}
