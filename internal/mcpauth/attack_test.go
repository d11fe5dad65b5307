package mcpauth

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A grant's file is read only when it is a regular file of this user's
// that nobody else can write, in a directory nobody else can write: else
// someone sharing the state directory plants a sign-in (their token, so
// the person's MCP calls land in their account; their token URL), or a
// fifo that hangs every run that uses the server.
func TestLoadRefusesWhatSomeoneElseCouldHavePlanted(t *testing.T) {
	t.Parallel()
	const server = "https://example.com/mcp"
	planted := func(t *testing.T, state string) Store {
		t.Helper()
		store := OpenStore(state)
		if err := store.Save(&Grant{Server: server, AccessToken: "planted-token"}); err != nil {
			t.Fatal(err)
		}
		return store
	}
	for name, plant := range map[string]func(t *testing.T, store Store){
		"a fifo": func(t *testing.T, store Store) {
			os.Remove(store.path(server))
			if err := syscall.Mkfifo(store.path(server), 0o600); err != nil {
				t.Skipf("no fifo here: %v", err)
			}
		},
		"a file others can write": func(t *testing.T, store Store) {
			os.Chmod(store.path(server), 0o666)
		},
		"a directory others can write": func(t *testing.T, store Store) {
			os.Chmod(store.Dir, 0o777)
		},
		"another user's file": func(t *testing.T, store Store) {
			if os.Getuid() != 0 {
				t.Skip("needs root to give the file to another user")
			}
			if err := os.Chown(store.path(server), 65534, 65534); err != nil {
				t.Skip(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			store := planted(t, t.TempDir())
			plant(t, store)
			done := make(chan error, 1)
			go func() {
				g, err := store.Load(server)
				if err == nil && g != nil {
					err = errPlantedRead
				}
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || err == errPlantedRead || !strings.Contains(err.Error(), "ask mcp login") {
					t.Errorf("Load = %v, want it refused, saying how to sign in again", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Load waited on the planted file")
			}
		})
	}
}

// errPlantedRead is Load reading the planted grant as the person's.
var errPlantedRead = errors.New("the planted grant was read")

// The store's own files, as Save leaves them, still load.
func TestLoadReadsItsOwnGrant(t *testing.T) {
	t.Parallel()
	store := OpenStore(filepath.Join(t.TempDir(), "state"))
	if err := store.Save(&Grant{Server: "https://example.com/mcp", AccessToken: "mine"}); err != nil {
		t.Fatal(err)
	}
	if g, err := store.Load("https://example.com/mcp"); err != nil || g == nil || g.AccessToken != "mine" {
		t.Fatalf("Load = %+v, %v", g, err)
	}
}
