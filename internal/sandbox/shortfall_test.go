package sandbox

import "testing"

func TestReportShortfall(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		r    Report
		want string
	}{
		{Report{Confines: true, Network: true}, ""},
		{Report{Confines: true}, "--sandbox can confine commands here only with --allow-network"},
		{Report{}, "--sandbox cannot confine commands here: every sandboxed command would be refused"},
	} {
		if got := tt.r.Shortfall(); got != tt.want {
			t.Errorf("%+v: %q, want %q", tt.r, got, tt.want)
		}
	}
}
