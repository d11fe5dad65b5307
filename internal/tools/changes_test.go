package tools

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// A change carries what undo and ask log diff need: the content before
// (the file tools'), after, and the hash after, whoever made it; past
// MaxRecordedContent only the hash.
func TestChangesCarryContent(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", MaxRecordedContent) + "\n"
	root := newTestRoot(t, map[string]string{"a.txt": "alpha\nbeta\n", "big.txt": big, "sh.txt": "s\n"})
	var mu sync.Mutex
	got := map[string]Change{}
	root.OnChange(func(c Change) {
		mu.Lock()
		defer mu.Unlock()
		got[c.Path+" "+c.Tool] = c
	})
	t.Cleanup(root.StopWatching)
	call := func(tool Tool, args map[string]string) {
		t.Helper()
		raw, _ := json.Marshal(args)
		if _, err := tool.Run(context.Background(), raw); err != nil {
			t.Fatal(err)
		}
	}
	call(editFile{root}, map[string]string{"path": "a.txt", "old_text": "beta", "new_text": "gamma"})
	call(writeFile{root}, map[string]string{"path": "new.txt", "content": "fresh\n"})
	call(editFile{root}, map[string]string{"path": "big.txt", "old_text": "x\n", "new_text": "y\n"})
	done := root.Watch("shell")
	call(shell{root}, map[string]string{"command": "echo more >> sh.txt"})
	done()

	for _, tc := range []struct {
		key                 string
		before, after       string
		hasBefore, hasAfter bool
		hashOf              string
	}{
		{key: "a.txt edit_file", before: "alpha\nbeta\n", hasBefore: true, after: "alpha\ngamma\n", hasAfter: true, hashOf: "alpha\ngamma\n"},
		{key: "new.txt write_file", after: "fresh\n", hasAfter: true, hashOf: "fresh\n"},
		{key: "big.txt edit_file", hashOf: strings.Repeat("x", MaxRecordedContent-1) + "y\n"},
		{key: "sh.txt shell", after: "s\nmore\n", hasAfter: true, hashOf: "s\nmore\n"},
	} {
		c, ok := got[tc.key]
		switch {
		case !ok:
			t.Errorf("%s: no change reported (got %v)", tc.key, got)
		case c.HasBefore != tc.hasBefore || string(c.Before) != tc.before:
			t.Errorf("%s: before %v %.40q, want %v %q", tc.key, c.HasBefore, c.Before, tc.hasBefore, tc.before)
		case c.HasAfter != tc.hasAfter || string(c.After) != tc.after:
			t.Errorf("%s: after %v %.40q, want %v %q", tc.key, c.HasAfter, c.After, tc.hasAfter, tc.after)
		case c.AfterSHA256 != sum(tc.hashOf):
			t.Errorf("%s: after_sha256 %s, want %s", tc.key, c.AfterSHA256, sum(tc.hashOf))
		}
	}
}
