package term

import (
	"strings"
	"testing"
)

func TestApprovalPrefixColour(t *testing.T) {
	t.Parallel()
	var w strings.Builder
	p := Palette{On: true}.Approvals(&w)
	p.Write([]byte("ask: allow shell (execute) ls? [y]es [n]o [a]lways: "))
	p.Write([]byte("  1. shell ls\n"))
	if want := "\033[1;36mask:\033[0m allow shell (execute) ls? [y]es [n]o [a]lways:   1. shell ls\n"; w.String() != want {
		t.Errorf("painted %q, want %q", w.String(), want)
	}
	var plain strings.Builder
	if (Palette{}).Approvals(&plain) != &plain {
		t.Errorf("without colour the writer must be left as it is")
	}
}

// "auto" colours a terminal stderr unless NO_COLOR is set or TERM is dumb;
// "always" and "never" hold wherever stderr goes.
func TestChooseColor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mode   string
		env    map[string]string
		errTTY bool
		want   bool
	}{
		{ColorAuto, nil, true, true},
		{ColorAuto, nil, false, false},
		{ColorAuto, map[string]string{"NO_COLOR": "1"}, true, false},
		{ColorAuto, map[string]string{"TERM": "dumb"}, true, false},
		{ColorAlways, map[string]string{"NO_COLOR": "1"}, false, true},
		{ColorNever, nil, true, false},
	}
	for _, tt := range tests {
		got := ChooseColor(tt.mode, func(k string) string { return tt.env[k] }, tt.errTTY)
		if got.On != tt.want {
			t.Errorf("ChooseColor(%q, %v, tty %v) = %v, want %v", tt.mode, tt.env, tt.errTTY, got.On, tt.want)
		}
	}
	if got := (Palette{On: true}).Dim("x"); got != "\033[2mx\033[0m" {
		t.Errorf("Dim = %q", got)
	}
	if got := (Palette{}).ErrorPrefix(); got != "ask:" {
		t.Errorf("ErrorPrefix without colour = %q", got)
	}
}
