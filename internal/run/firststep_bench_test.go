package run

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// model). A run's first step pays what later ones find ready: the change
// watcher's picture, which starts once the first request has been out
// 5 ms, so that a model that takes longer hides it; the shell tool's
// schema, compiled by its first call; the kernel's watch and, in a
// repository, the state undo needs (two git processes at once), which
// start only as the model's calls are put to the gate, so that a one-shot
// answer pays for neither.
//
// Each runs outside any repository (model-*), where no git is started,
// and in a git repository with a commit (model-*-in-git).
func BenchmarkFirstStep(b *testing.B) {
	_, err := exec.LookPath("git")
	for _, inGit := range []bool{false, true} {
		for _, latency := range []time.Duration{0, 20 * time.Millisecond} {
			name := fmt.Sprintf("model-%s", latency)
			if inGit {
				name += "-in-git"
			}
			b.Run(name, func(b *testing.B) {
				if inGit && err != nil {
					b.Skip("git is not installed")
				}
				firstStep(b, latency, inGit)
			})
		}
	}
}

func firstStep(b *testing.B, latency time.Duration, inGit bool) {
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
		if inGit {
			b.StopTimer()
			gitInit(b, w.wd)
			b.StartTimer()
		}
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

// gitInit makes dir a repository with one commit of one file.
func gitInit(b *testing.B, dir string) {
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("r\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "README"},
		{"-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-q", "-m", "start"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
}

func medianOf(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	return s[len(s)/2]
}
