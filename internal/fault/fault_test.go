package fault

import (
	"errors"
	"fmt"
	"testing"
)

func TestExitKeepsTheCodeAndTheMessage(t *testing.T) {
	t.Parallel()
	inner := errors.New("--timeout 5s reached while reading stdin")
	err := fmt.Errorf("wrapped: %w", &Exit{Code: ExitTimeout, Err: inner})
	var coder interface{ ExitCode() int }
	if !errors.As(err, &coder) || coder.ExitCode() != ExitTimeout {
		t.Fatalf("%v: no exit code %d found", err, ExitTimeout)
	}
	if !errors.Is(err, inner) || err.Error() != "wrapped: --timeout 5s reached while reading stdin" {
		t.Errorf("%v: the message or the cause is lost", err)
	}
	if _, ok := KindOf(err); ok {
		t.Errorf("an Exit has a kind: its code is its own")
	}
}
