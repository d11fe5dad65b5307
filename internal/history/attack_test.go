package history

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// In a state directory others may write (a shared XDG_STATE_HOME, a runs
// folder another user made first), a kept run may be anyone's: a forged
// deferred run that `ask resume last --approve all` would carry on, or a
// conversation --continue would send. Such a run is not read as the
// person's: Find refuses it, naming why, and Last passes over it.
func TestKeptRunsSomeoneElseCouldHaveWrittenAreRefused(t *testing.T) {
	t.Parallel()
	for name, plant := range map[string]func(t *testing.T, s Store, path string){
		"a runs folder others may write": func(t *testing.T, s Store, _ string) {
			os.Chmod(s.Dir, 0o777)
		},
		"a run others may write": func(t *testing.T, _ Store, path string) {
			os.Chmod(path, 0o666)
		},
		"another user's run": func(t *testing.T, _ Store, path string) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give the file to another user")
			}
			if err := os.Chown(path, 65534, 65534); err != nil {
				t.Skip(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			state, wd := t.TempDir(), t.TempDir()
			s, err := Open(func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] })
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(s.Dir, 0o700); err != nil {
				t.Fatal(err)
			}
			id := NewID(time.Now())
			line := fmt.Sprintf(`{"type":"run.started","id":%q,"time":"2026-11-29T00:00:00Z","settings":{"workdir":%q}}`+"\n", id, wd)
			if err := os.WriteFile(s.Path(id), []byte(line), 0o600); err != nil {
				t.Fatal(err)
			}
			plant(t, s, s.Path(id))
			if _, err := s.Find(id); err == nil || !strings.Contains(err.Error(), filepath.Base(s.Path(id))) && !strings.Contains(err.Error(), s.Dir) {
				t.Errorf("Find = %v, want the planted run refused, naming it", err)
			}
			if e, found, _ := s.Last(wd); found {
				t.Errorf("Last found the planted run %s", e.ID)
			}
		})
	}
}
