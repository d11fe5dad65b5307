package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// raceEnabled is set under the race detector (race_test.go).
var raceEnabled bool

// bigArguments streams one tool call whose arguments are size bytes, in
// deltas of 64 KiB, as a model writing a huge file would.
func bigArguments(size int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		event := func(delta string) error {
			_, err := fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":%s}]}\n\n", delta)
			return err
		}
		event(`{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"big.txt\",\"content\":\""}}]}`)
		const piece = 64 << 10
		delta := []byte("data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":" +
			`{"tool_calls":[{"index":0,"function":{"arguments":"` + strings.Repeat("x", piece) + `"}}]}}]}` + "\n\n")
		for sent := 0; sent < size; sent += piece {
			if _, err := w.Write(delta); err != nil {
				return // ask hung up
			}
		}
		event(`{"tool_calls":[{"index":0,"function":{"arguments":"\"}"}}]}`)
		fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n")
	})
}

// A reply over ask's caps ends the run as a malformed reply: exit 3, one
// line naming the cap, run.finished written, and memory bounded by the cap
// rather than by what the provider sends. Not parallel: it weighs the run
// by the process's allocations.
func TestReplyCaps(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it streams replies of many megabytes")
	}
	for _, tt := range []struct {
		name    string
		size    int
		wantErr string
	}{
		{"a response of 100 MiB", 100 << 20, "the reply is larger than 32 MiB"},
		{"a response of 300 MiB", 300 << 20, "the reply is larger than 32 MiB"},
		{"arguments over 4 MiB", 5 << 20, "the arguments of the write_file call are larger than 4 MiB"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeprovider.StartSteps(bigArguments(tt.size))
			defer srv.Close()
			transcript := filepath.Join(t.TempDir(), "run.jsonl")
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			r := runAsk(t, askEnv{server: srv, env: map[string]string{"XDG_STATE_HOME": t.TempDir()}},
				"--yes", "--transcript", transcript, "write a big file")
			runtime.ReadMemStats(&after)
			if r.code != exitProvider {
				t.Errorf("exit %d, want 3; stderr:\n%s", r.code, r.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.Contains(lines[0], tt.wantErr) {
				t.Errorf("stderr %q, want one line saying %q", r.stderr, tt.wantErr)
			}
			evs := readTranscript(t, transcript)
			if last := evs[len(evs)-1]; last.Type != records.TypeRunFinished || last.ExitCode != 3 {
				t.Errorf("transcript ends with %v", summarize(evs[len(evs)-1:]))
			}
			// Before the cap, a 100 MiB reply allocated over 1.4 GiB and a
			// 300 MiB one 4.7 GiB. What a reply within the cap costs (its
			// copy for the response event, the stream's accumulation, the
			// events' JSON) is about ten times its size; the bound is that,
			// whatever the provider sends.
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("allocated %d MiB for a %d MiB reply", grew>>20, tt.size>>20)
			times := uint64(12)
			if raceEnabled {
				times = 16
			}
			if grew > times*providers.MaxResponseBytes {
				t.Errorf("the run allocated %d MiB, over %d× the %d MiB cap", grew>>20, times, providers.MaxResponseBytes>>20)
			}
		})
	}
}
