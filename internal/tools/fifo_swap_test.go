package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A FIFO swapped in for a regular file between a check and the open must
// not hang a file tool: an open of a FIFO blocks until a writer comes,
// whatever the context says. A swapper renames a regular file and a FIFO
// in turn over one path while the tools read it; every call must return.
func TestFIFOSwappedInNeverHangs(t *testing.T) {
	root := newTestRoot(t, map[string]string{"f": "text\n"})
	dir := root.Dir()
	if err := mkfifo(filepath.Join(t.TempDir(), "probe")); err != nil {
		t.Skip("mkfifo:", err)
	}
	const swaps = 3000
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < swaps; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(dir, "next")
			if i%2 == 0 {
				mkfifo(tmp)
			} else {
				os.WriteFile(tmp, []byte("text\n"), 0o644)
			}
			os.Rename(tmp, filepath.Join(dir, "f"))
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	tools := []Tool{readFile{root}, editFile{root}, search{root}}
	args := []string{`{"path":"f"}`, `{"path":"f","old_text":"absent","new_text":"x"}`, `{"pattern":"text"}`}
	deadline := time.Now().Add(3 * time.Second)
	for i := 0; i < 2000 && time.Now().Before(deadline); i++ {
		k := i % len(tools)
		done := make(chan error, 1)
		go func() {
			_, err := tools[k].Run(context.Background(), json.RawMessage(args[k]))
			done <- err // refusals and misses are fine; hanging is not
		}()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			// The hung goroutine is left behind: nothing can end an open
			// blocked on a FIFO whose path is gone.
			t.Fatalf("call %d of %s hung on a FIFO swapped in for the file", i, tools[k].Info().Name)
		}
	}
}
