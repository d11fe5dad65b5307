package termtext

import "testing"

func TestAgree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "they are"}, {1, "it is"}, {2, "they are"}} {
		if got := Agree(tc.n, "it is", "they are"); got != tc.want {
			t.Errorf("Agree(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
