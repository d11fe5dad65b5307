package tools

import (
	"context"
	"testing"
	"time"
)

// A command's own limit (DESIGN §5): 2 minutes by default, up to 10 on the
// model's request, never past what the run's time limit leaves.
func TestCommandTimeout(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		asked   optInt
		runLeft time.Duration // 0: the run has no limit
		atMost  time.Duration
		atLeast time.Duration
	}{
		{name: "default", atLeast: 2 * time.Minute, atMost: 2 * time.Minute},
		{name: "asked for five minutes", asked: optInt{true, 300}, atLeast: 5 * time.Minute, atMost: 5 * time.Minute},
		{name: "asked for more than ten", asked: optInt{true, 3600}, atLeast: 10 * time.Minute, atMost: 10 * time.Minute},
		{name: "the run's limit comes first", asked: optInt{true, 600}, runLeft: 3 * time.Minute, atLeast: 2 * time.Minute, atMost: 3 * time.Minute},
		{name: "the default never passes the run's limit", runLeft: time.Minute, atLeast: time.Second, atMost: time.Minute},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			if tt.runLeft > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.runLeft)
				defer cancel()
			}
			if got := commandTimeout(ctx, tt.asked); got < tt.atLeast || got > tt.atMost {
				t.Errorf("timeout = %s, want between %s and %s", got, tt.atLeast, tt.atMost)
			}
		})
	}
}
