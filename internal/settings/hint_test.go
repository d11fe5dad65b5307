package settings

import "testing"

func TestKindHint(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		kind Kind
		want string
	}{
		{Duration, "give a duration such as 30s or 5m"},
		{Int, "give a whole number such as 3"},
		{Bool, "it is a switch: give it alone, or as --name=true or --name=false"},
		{Float, "give a number such as 0.7"},
		{String, ""},
		{List, ""},
	} {
		if got := tt.kind.Hint(); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.kind, got, tt.want)
		}
	}
}
