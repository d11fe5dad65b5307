// Command benchrun measures ask end to end against scripts/fakeprovider and
// prints a markdown table of medians. scripts/bench.sh builds the binaries
// and runs it; see BENCHMARKS.md for what the columns mean.
//
//	benchrun -ask ./ask -fake ./fakeprovider [-runs 10]
//
// It is a Go program rather than shell so that every figure comes from one
// clock and one system call: wall time spans fork-exec to wait, peak RSS
// and CPU time are the kernel's rusage of the child (the figures
// /usr/bin/time prints as %M, %U and %S), and request times are set against
// the fake provider's log without parsing tools' output.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// scenario is one command measured over several runs.
type scenario struct {
	name string
	// fake holds the fake provider's flags; nil runs without one.
	fake []string
	// args follow the common flags that point ask at the fake provider;
	// with no fake they are the whole command line.
	args []string
	// requests is how many model requests a run must make: one a step.
	requests int
}

var scenarios = []scenario{
	{name: "`ask --version`", args: []string{"--version"}},
	{name: "one-shot answer", fake: []string{"-calls", "0", "-answer", "Hello."},
		args: []string{"say hello"}, requests: 1},
	{name: "5 shell tool calls", fake: []string{"-calls", "5", "-tool", "shell", "-args", `{"command":"echo step %d"}`},
		args: []string{"run five commands"}, requests: 6},
	{name: "20-step loop (read_file)", fake: []string{"-calls", "19", "-tool", "read_file", "-args", `{"path":"files/f%d.txt"}`},
		args: []string{"--max-steps", "20", "read twenty files"}, requests: 20},
	{name: "read a 50 MB file", fake: []string{"-calls", "1", "-tool", "read_file", "-args", `{"path":"big.txt"}`},
		args: []string{"read the big file"}, requests: 2},
}

// shellFloor is the reference row: the shell tool's own work, /bin/sh
// running one echo, without ask.
const shellFloor = "`sh -c 'echo step 1'` alone"

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	askBin := flag.String("ask", "", "the ask binary to measure")
	fakeBin := flag.String("fake", "", "the scripts/fakeprovider binary")
	runs := flag.Int("runs", 10, "measured runs of each scenario (after one warm-up run)")
	var extraEnv envList
	flag.Var(&extraEnv, "env", "add `KEY=VALUE` to ask's environment, such as GOGC=400; repeatable")
	flag.Parse()
	if *askBin == "" || *fakeBin == "" {
		return errors.New("give -ask and -fake (scripts/bench.sh builds both)")
	}
	if *runs < 1 {
		return fmt.Errorf("-runs %d: give 1 or more", *runs)
	}
	work, err := os.MkdirTemp("", "ask-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := makeWorkdir(work); err != nil {
		return fmt.Errorf("prepare the work directory: %w", err)
	}

	loadBefore := loadAverage()
	var results []result
	floor, err := measure(*runs, func() (sample, error) {
		return runOnce(exec.Command("/bin/sh", "-c", "echo step 1"), nil)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", shellFloor, err)
	}
	results = append(results, result{name: shellFloor, stats: floor})
	for _, sc := range scenarios {
		st, err := measureScenario(sc, *askBin, *fakeBin, work, *runs, extraEnv)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		results = append(results, result{name: sc.name, stats: st, requests: sc.requests})
	}
	printReport(os.Stdout, results, *runs, *askBin, extraEnv, loadBefore, loadAverage())
	return nil
}

// makeWorkdir creates what the scenarios read: twenty small files and a
// 50 MB text file, and a home directory of their own.
func makeWorkdir(dir string) error {
	for _, d := range []string{"files", "home", "project"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for i := 1; i <= 20; i++ {
		var b strings.Builder
		for l := 1; l <= 20; l++ {
			fmt.Fprintf(&b, "file %d, line %d: some ordinary source text\n", i, l)
		}
		if err := os.WriteFile(filepath.Join(dir, "files", fmt.Sprintf("f%d.txt", i)), []byte(b.String()), 0o644); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "big.txt"))
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	const size = 50 << 20
	for n, line := 0, 1; n < size; line++ {
		k, _ := fmt.Fprintf(w, "line %08d: the quick brown fox jumps over the lazy dog\n", line)
		n += k
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sample is what one run measured. Request figures are zero for runs
// without a fake provider.
type sample struct {
	wall, cpu time.Duration
	rssKB     int64
	// rssFloor: rssKB is not above benchrun's own peak, so ask's may be
	// lower (see runOnce).
	rssFloor     bool
	firstRequest time.Duration // from exec to the first request's arrival
	gaps         []time.Duration
	tail         time.Duration // from the last reply to the exit
	firstBytes   int
	requests     int
}

// stats are the medians over a scenario's runs.
type stats struct {
	wall, cpu, firstRequest, gap, tail time.Duration
	rssKB                              int64
	rssFloor                           bool
	firstBytes                         int
	gapCount                           int
	requestsPerRun                     []int
}

type result struct {
	name     string
	stats    stats
	requests int
}

// measureScenario starts the scenario's fake provider, runs ask once to
// warm caches, then runs times.
func measureScenario(sc scenario, askBin, fakeBin, work string, runs int, extraEnv []string) (stats, error) {
	env := append([]string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(work, "home"), "OPENAI_API_KEY=sk-bench-not-a-key"}, extraEnv...)
	var fake *fakeServer
	args := sc.args
	if sc.fake != nil {
		var err error
		fake, err = startFake(fakeBin, sc.fake, filepath.Join(work, "requests.jsonl"))
		if err != nil {
			return stats{}, err
		}
		defer fake.stop()
		args = append([]string{"--provider", "openai", "--base-url", fake.url, "--model", "fake-model",
			"--yes", "--quiet", "--workdir", work}, args...)
	}
	once := func() (sample, error) {
		cmd := exec.Command(askBin, args...)
		cmd.Env = env
		cmd.Dir = work
		s, err := runOnce(cmd, fake)
		if err == nil && fake != nil && s.requests != sc.requests {
			err = fmt.Errorf("made %d requests, want %d (one a step)", s.requests, sc.requests)
		}
		return s, err
	}
	if _, err := once(); err != nil { // warm-up
		return stats{}, err
	}
	return measure(runs, once)
}

// measure runs once the given number of times and takes medians.
func measure(runs int, once func() (sample, error)) (stats, error) {
	var samples []sample
	for range runs {
		s, err := once()
		if err != nil {
			return stats{}, err
		}
		samples = append(samples, s)
	}
	var st stats
	var wall, cpu, first, gaps, tails []time.Duration
	var rss, sizes []int64
	for _, s := range samples {
		wall, cpu = append(wall, s.wall), append(cpu, s.cpu)
		rss = append(rss, s.rssKB)
		if s.requests > 0 {
			first = append(first, s.firstRequest)
			tails = append(tails, s.tail)
			sizes = append(sizes, int64(s.firstBytes))
		}
		st.rssFloor = st.rssFloor || s.rssFloor
		gaps = append(gaps, s.gaps...)
		st.requestsPerRun = append(st.requestsPerRun, s.requests)
	}
	st.wall, st.cpu, st.firstRequest, st.gap, st.tail = median(wall), median(cpu), median(first), median(gaps), median(tails)
	st.rssKB, st.firstBytes, st.gapCount = median(rss), int(median(sizes)), len(gaps)
	return st, nil
}

// runOnce runs cmd to completion and reads the requests it made from the
// fake provider's log.
func runOnce(cmd *exec.Cmd, fake *fakeServer) (sample, error) {
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	var offset int64
	if fake != nil {
		offset = fake.logSize()
	}
	// Linux hands the parent's peak RSS to a child started with vfork and
	// exec, as Go starts them, so a child's figure at or below our own
	// peak is only a bound.
	var self syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return sample{}, fmt.Errorf("%s: %v: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	end := time.Now()
	s := sample{wall: end.Sub(start)}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		s.rssKB = ru.Maxrss // kilobytes on Linux
		s.rssFloor = ru.Maxrss <= self.Maxrss
		s.cpu = time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
	}
	if fake == nil {
		return s, nil
	}
	reqs, err := fake.requestsSince(offset)
	if err != nil {
		return sample{}, err
	}
	s.requests = len(reqs)
	for i, r := range reqs {
		if i == 0 {
			s.firstRequest = time.Duration(r.Arrived - start.UnixNano())
			s.firstBytes = r.Bytes
			continue
		}
		s.gaps = append(s.gaps, time.Duration(r.Arrived-reqs[i-1].Replied))
	}
	if len(reqs) > 0 {
		s.tail = time.Duration(end.UnixNano() - reqs[len(reqs)-1].Replied)
	}
	return s, nil
}

// fakeServer is a running scripts/fakeprovider.
type fakeServer struct {
	cmd *exec.Cmd
	url string
	log string
}

// request is one line of the fake provider's log.
type request struct {
	Step    int   `json:"step"`
	Bytes   int   `json:"bytes"`
	Arrived int64 `json:"arrived_ns"`
	Replied int64 `json:"replied_ns"`
	Status  int   `json:"status"`
}

func startFake(bin string, flags []string, logPath string) (*fakeServer, error) {
	os.Remove(logPath)
	cmd := exec.Command(bin, append(flags, "-log", logPath)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the fake provider: %w", err)
	}
	url, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("the fake provider printed no URL: %w", err)
	}
	return &fakeServer{cmd: cmd, url: strings.TrimSpace(url), log: logPath}, nil
}

func (f *fakeServer) stop() {
	f.cmd.Process.Signal(syscall.SIGTERM)
	f.cmd.Wait()
}

func (f *fakeServer) logSize() int64 {
	fi, err := os.Stat(f.log)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// requestsSince reads the log lines written after offset. The fake writes
// a line before it closes the response, so a finished run's lines are all
// there.
func (f *fakeServer) requestsSince(offset int64) ([]request, error) {
	file, err := os.Open(f.log)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer file.Close()
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	var reqs []request
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		var r request
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("fake provider log: %w", err)
		}
		if r.Status != 200 {
			return nil, fmt.Errorf("the fake provider answered step %d with status %d", r.Step, r.Status)
		}
		reqs = append(reqs, r)
	}
	return reqs, sc.Err()
}

func median[T int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}

func printReport(w io.Writer, results []result, runs int, askBin string, extraEnv []string, loadBefore, loadAfter string) {
	size := "?"
	if fi, err := os.Stat(askBin); err == nil {
		size = fmt.Sprintf("%.1f MB", float64(fi.Size())/(1<<20))
	}
	fmt.Fprintf(w, "Date: %s  \n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %s/%s, %s  \n", runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "ask binary: %s; load average before %s, after %s  \n", size, loadBefore, loadAfter)
	if len(extraEnv) > 0 {
		fmt.Fprintf(w, "Extra environment: %s  \n", strings.Join(extraEnv, " "))
	}
	fmt.Fprintf(w, "Medians over %d runs after one warm-up run; gaps are the median over every step of every run.\n\n", runs)
	fmt.Fprintln(w, "| scenario | wall | CPU (user+sys) | to first request | gap between steps | last reply to exit | peak RSS | first request | requests/run |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range results {
		st := r.stats
		first, gap, tail, bytes, reqs := "–", "–", "–", "–", "–"
		if r.requests > 0 {
			first, tail = ms(st.firstRequest), ms(st.tail)
			bytes = fmt.Sprintf("%.1f KB", float64(st.firstBytes)/1024)
			reqs = perRun(st.requestsPerRun)
		}
		if st.gapCount > 0 {
			gap = ms(st.gap)
		}
		rss := fmt.Sprintf("%.1f MB", float64(st.rssKB)/1024)
		if st.rssFloor {
			rss = "≤ " + rss
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.name, ms(st.wall), ms(st.cpu), first, gap, tail, rss, bytes, reqs)
	}
	fmt.Fprintln(w)
	printTargets(w, results)
}

// perRun shows the requests of every run: one number when they agree.
func perRun(counts []int) string {
	lo, hi := slices.Min(counts), slices.Max(counts)
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// printTargets checks the medians against the targets of issue 9.
func printTargets(w io.Writer, results []result) {
	by := map[string]stats{}
	for _, r := range results {
		by[r.name] = r.stats
	}
	sh := by[shellFloor].wall
	type check struct {
		what      string
		got, want float64
		unit      string
	}
	checks := []check{
		{"`--version` wall", msf(by["`ask --version`"].wall), 10, "ms"},
		{"one-shot wall", msf(by["one-shot answer"].wall), 15, "ms"},
		{"5-step loop wall", msf(by["5 shell tool calls"].wall), 40, "ms"},
		{"shell step gap beyond the tool's own run (gap − sh alone)", msf(by["5 shell tool calls"].gap - sh), 5, "ms"},
		{"read_file step gap (20-step loop)", msf(by["20-step loop (read_file)"].gap), 5, "ms"},
		{"20-step loop peak RSS", float64(by["20-step loop (read_file)"].rssKB) / 1024, 25, "MB"},
		{"50 MB file peak RSS", float64(by["read a 50 MB file"].rssKB) / 1024, 40, "MB"},
		{"first request, all built-in tools", float64(by["one-shot answer"].firstBytes) / 1024, 8, "KB"},
	}
	fmt.Fprintln(w, "| target | median | limit | met |")
	fmt.Fprintln(w, "|---|---:|---:|:---:|")
	for _, c := range checks {
		mark := "yes"
		if c.got > c.want {
			mark = fmt.Sprintf("no (%.1f×)", c.got/c.want)
		}
		fmt.Fprintf(w, "| %s | %.1f %s | %.0f %s | %s |\n", c.what, c.got, c.unit, c.want, c.unit, mark)
	}
	fmt.Fprintln(w, "\nEvery run made exactly one request a step (benchrun fails otherwise).")
	fmt.Fprintln(w, "A peak RSS marked ≤ is benchrun's own: Linux passes a parent's peak to a child it starts with vfork and exec.")
}

func msf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", msf(d)) }

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(data)); len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

// envList is a repeatable KEY=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q: give KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}
