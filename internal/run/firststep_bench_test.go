package run

import (
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
)

// BenchmarkFirstStep is the gap from one request to the next (the model's
// reply, then the step's shell call) in a 10-step run, the first step's
// against the median of the others (issue 41: within 2×), with a model
// that answers at once and with one that takes 20 ms (a fast local
// model). A run's first step pays what later ones find ready: reading the
// repository's state for undo (a git process, about 4.5 ms), the change
// watcher's picture, the tools' schemas; these now start as the first
// request goes out, so a model that takes longer than they do hides them.
func BenchmarkFirstStep(b *testing.B) {
	for _, latency := range []time.Duration{0, 20 * time.Millisecond} {
		b.Run(fmt.Sprintf("model-%s", latency), func(b *testing.B) { firstStep(b, latency) })
	}
}

func firstStep(b *testing.B, latency time.Duration) {
	const steps = 10
	var first, median []float64
	for b.Loop() {
		var mu sync.Mutex
		next := 0
		srv := fakeprovider.StartFunc(func([]byte) fakeprovider.Reply {
			time.Sleep(latency)
			mu.Lock()
			defer mu.Unlock()
			next++
			if next > steps {
				return fakeprovider.Reply{Text: "done"}
			}
			return fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call(fmt.Sprint("c", next), "shell", fmt.Sprintf(`{"command":"echo %d >> log.txt"}`, next))}}
		})
		w := newWorld(b, srv)
		w.environ = []string{"PATH=" + os.Getenv("PATH")}
		r := w.ask("log", "yes", true, "no-stream", true)
		srv.Close()
		if r.err != nil || r.Status != "completed" {
			b.Fatalf("run: %v %v", r.err, r.Status)
		}
		var sent []time.Time
		for _, ev := range r.events {
			if ev.Type == records.TypeRequest {
				sent = append(sent, ev.Time)
			}
		}
		var gaps []float64
		for i := 1; i < len(sent); i++ {
			gaps = append(gaps, float64(sent[i].Sub(sent[i-1]).Microseconds())/1000)
		}
		first = append(first, gaps[0])
		rest := slices.Sorted(slices.Values(gaps[1:]))
		median = append(median, rest[len(rest)/2])
	}
	f, m := medianOf(first), medianOf(median)
	b.ReportMetric(f, "first-step-ms")
	b.ReportMetric(m, "median-step-ms")
	b.ReportMetric(f/m, "first/median")
}

func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
