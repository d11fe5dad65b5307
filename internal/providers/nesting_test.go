package providers

import (
	"errors"
	"strings"
	"testing"
)

func TestNestingDepth(t *testing.T) {
	tests := []struct {
		in     string
		want   int
		spaced bool
	}{
		{``, 0, false},
		{`"[[["`, 0, false},
		{`{"a":[1,{"b":[]}]}`, 4, false},
		{`{"a":"\"[[[{{{"}`, 1, false},
		{`["\\", [[]]]`, 3, true},
		{`{"a b":"\t\n c"}`, 1, false},
		{"{\"a\":\n1}", 1, true},
		{"\r", 0, true},
		{strings.Repeat("[", 5000) + strings.Repeat("]", 5000), 5000, false},
	}
	for _, tt := range tests {
		if got := NestingDepth([]byte(tt.in)); got != tt.want {
			t.Errorf("NestingDepth(%.40q) = %d, want %d", tt.in, got, tt.want)
		}
		if _, spaced := Shape([]byte(tt.in)); spaced != tt.spaced {
			t.Errorf("Shape(%.40q) spaced = %v, want %v", tt.in, spaced, tt.spaced)
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
