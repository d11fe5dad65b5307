package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// BenchmarkBatch runs the real ask batch (the test binary TestMain puts on
// PATH as ask) over one-step tasks against the fake at a fixed latency,
// and reports its wall time against the ideal (tasks × latency / j), its
// peak RSS (VmHWM, polled from /proc until it exits, and the kernel's
// rusage maxrss of the child) and its CPU per task.
//
//	go test -run '^$' -bench BenchmarkBatch -benchtime 1x -count 3 ./cmd/ask
func BenchmarkBatch(b *testing.B) {
	bin, err := exec.LookPath("ask")
	if err != nil || !strings.Contains(bin, "testscript-main") {
		b.Fatalf("ask is not the test binary installed by TestMain: %q, %v", bin, err)
	}
	for _, bc := range []struct {
		name    string
		tasks   int
		latency time.Duration
		j       int
	}{
		{"1000tasks-200ms-j16", 1000, 200 * time.Millisecond, 16},
		{"1000tasks-200ms-j64", 1000, 200 * time.Millisecond, 64},
		{"1000tasks-10ms-j64", 1000, 10 * time.Millisecond, 64},
		{"10000tasks-10ms-j64", 10000, 10 * time.Millisecond, 64},
	} {
		b.Run(bc.name, func(b *testing.B) {
			m := startEcho(b, bc.latency)
			file := taskFile(b, bc.tasks)
			for range b.N {
				dir := b.TempDir()
				cmd := exec.Command(bin, "batch", "-j", strconv.Itoa(bc.j), "--output", filepath.Join(dir, "out.jsonl"), file)
				cmd.Env = append(os.Environ(), "ASK_PROVIDER=openai", "ASK_BASE_URL="+m.URL, "OPENAI_API_KEY=fake-test-not-a-real-key-0000",
					"HOME="+dir, "XDG_STATE_HOME="+dir)
				var out strings.Builder
				cmd.Stdout, cmd.Stderr = &out, &out
				start := time.Now()
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				hwm := watchHWM(cmd.Process.Pid)
				if err := cmd.Wait(); err != nil {
					b.Fatalf("%v\n%s", err, out.String())
				}
				wall := time.Since(start)
				ideal := time.Duration(bc.tasks) * bc.latency / time.Duration(bc.j)
				ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
				b.ReportMetric(wall.Seconds(), "wall-s")
				b.ReportMetric(ideal.Seconds(), "ideal-s")
				b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
				b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss-MB")
				b.ReportMetric(float64(hwm())/1024, "VmHWM-MB")
				b.ReportMetric(float64(cpu.Microseconds())/1000/float64(bc.tasks), "CPU-ms/task")
			}
		})
	}
}

// watchHWM polls the process's VmHWM (its peak RSS, by its own count) until
// it ends; the function returns the last value read.
func watchHWM(pid int) func() int64 {
	var last atomic.Int64
	go func() {
		path := "/proc/" + strconv.Itoa(pid) + "/status"
		for {
			b, err := os.ReadFile(path)
			if err != nil {
				return
			}
			for _, l := range strings.Split(string(b), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
					if kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64); err == nil {
						last.Store(kb)
					}
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	return last.Load
}
