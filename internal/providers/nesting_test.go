package providers

import (
	"errors"
	"strings"
	"testing"
)

func TestNestingDepth(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{
		{``, 0},
		{`"[[["`, 0},
		{`{"a":[1,{"b":[]}]}`, 4},
		{`{"a":"\"[[[{{{"}`, 1},
		{`["\\", [[]]]`, 3},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), 5000},
	}
	for _, tt := range tests {
		if got := NestingDepth([]byte(tt.in)); got != tt.want {
			t.Errorf("NestingDepth(%.40q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	deep := strings.Repeat("[", MaxNesting+1) + strings.Repeat("]", MaxNesting+1)
	if err := CheckNesting([]byte(deep)); !errors.Is(err, ErrMalformed) {
		t.Errorf("CheckNesting(%d levels) = %v, want a malformed response", MaxNesting+1, err)
	}
	if err := CheckNesting([]byte(deep[1 : len(deep)-1])); err != nil {
		t.Errorf("CheckNesting(%d levels) = %v", MaxNesting, err)
	}
}
