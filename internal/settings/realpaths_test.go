package settings

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// RealPaths reads a lower layer's paths where their links lead: the
// rows' marks, which read a path as written, then refuse one that leads
// out of the working directory.
func TestRealPaths(t *testing.T) {
	t.Parallel()
	wd, outside := t.TempDir(), t.TempDir()
	realOutside, _ := filepath.EvalSymlinks(outside)
	for _, dir := range []string{"sub", "sub/deeper"} {
		if err := os.Mkdir(filepath.Join(wd, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"escape": outside, "in": filepath.Join(wd, "sub"), "up": ".."} {
		if err := os.Symlink(target, filepath.Join(wd, link)); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		given, want string
		widens      bool
	}{
		{"sub", "sub", false},
		{".", ".", false},
		{"sub/deeper/../deeper", "sub/deeper", false},
		{"in/deeper", "sub/deeper", false},
		{"in/not-yet/file.png", "sub/not-yet/file.png", false},
		{"escape", realOutside, true},
		{"escape/photo.pdf", filepath.Join(realOutside, "photo.pdf"), true},
		{"escape/not/yet", filepath.Join(realOutside, "not/yet"), true},
		{"up/x", "", true},
		{"/etc/passwd", "/etc/passwd", true},
		{`{"type":"object"}`, `{"type":"object"}`, false},
	} {
		var lower Values
		lower.Workdir = Given(tc.given, "task line 1")
		lower.Attach = Given([]string{"sub", tc.given}, "task line 1")
		lower.Schema = Given(tc.given, "task line 1")
		got := RealPaths(lower, wd, wd)
		if tc.want != "" && (got.Workdir.Value != tc.want || !slices.Equal(got.Attach.Value, []string{"sub", tc.want})) {
			t.Errorf("%q: workdir %q, attach %q, want %q", tc.given, got.Workdir.Value, got.Attach.Value, tc.want)
		}
		if got.Workdir.Source != "task line 1" {
			t.Errorf("%q: the source became %q", tc.given, got.Workdir.Source)
		}
		for _, name := range []string{"workdir", "attach", "schema"} {
			r, _ := Lookup(name)
			v := r.slot(&got).value()
			if widens := r.Widens(v) != ""; widens != tc.widens && !(name == "schema" && tc.given[0] == '{') {
				t.Errorf("%s %q, read as %v: widens %v, want %v", name, tc.given, v, widens, tc.widens)
			}
		}
	}
}

// With the command line's --workdir below where ask started, a sibling of
// it is outside, though inside where ask started.
func TestRealPathsStayInsideTheCommandLinesWorkdir(t *testing.T) {
	t.Parallel()
	wd := t.TempDir()
	for _, dir := range []string{"proj/sub", "secrets"} {
		if err := os.MkdirAll(filepath.Join(wd, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	top := filepath.Join(wd, "proj")
	r, _ := Lookup("workdir")
	for given, widens := range map[string]bool{"proj": false, "proj/sub": false, "proj/new/dir": false, "secrets": true, ".": true, "proj/..": true} {
		var lower Values
		lower.Workdir = Given(given, "task line 1")
		got := RealPaths(lower, wd, top).Workdir.Value
		if (r.Widens(got) != "") != widens {
			t.Errorf("workdir %q, read as %q: widens %v, want %v", given, got, !widens, widens)
		}
	}
}
