package owned

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		dir  bool
		mode os.FileMode
		want string
	}{
		"a private file":          {false, 0o600, ""},
		"a file others read":      {false, 0o644, ""},
		"a file the group writes": {false, 0o620, "others may write it"},
		"a file anyone writes":    {false, 0o666, "others may write it"},
		"a private folder":        {true, 0o700, ""},
		"a folder anyone writes":  {true, 0o777, "others may write it"},
		"a sticky shared folder":  {true, 0o777 | os.ModeSticky, ""},
	} {
		path := filepath.Join(dir, filepath.Base(name))
		var err error
		if tc.dir {
			err = os.Mkdir(path, 0o700)
		} else {
			err = os.WriteFile(path, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := Why(info); got != tc.want {
			t.Errorf("%s (%v): %q, want %q", name, info.Mode(), got, tc.want)
		}
	}
	if os.Geteuid() == 0 {
		path := filepath.Join(dir, "another user's")
		os.WriteFile(path, nil, 0o600)
		if err := os.Chown(path, 65534, 65534); err == nil {
			info, _ := os.Lstat(path)
			if got := Why(info); got != "another user owns it" {
				t.Errorf("another user's file: %q", got)
			}
		}
	}
}
