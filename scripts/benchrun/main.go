// Command benchrun measures ask end to end against scripts/fakeprovider and
// prints a markdown table of medians. scripts/bench.sh builds the binaries
// and runs it; see BENCHMARKS.md for what the columns mean.
//
//	benchrun -ask ./ask -fake ./fakeprovider [-floor ./floor [-stack ./floor-stack]] [-loopbench ./loop.test] [-runs 10]
//
// It is a Go program rather than shell so that every figure comes from one
// clock and one system call: wall time spans fork-exec to wait, peak RSS
// and CPU time are the kernel's rusage of the child (the figures
// /usr/bin/time prints as %M, %U and %S), and request times are set against
// the fake provider's log without parsing tools' output. Where
// /usr/bin/time is installed, one more run of every scenario under it
// cross-checks the peak RSS. With -floor (scripts/floor, a tool-calling
// loop in 150 lines of the standard library) it runs the floor beside ask
// in the scenarios that name it, alternating the two run by run, and
// reports ask's median over the floor's. With -stack (scripts/floor built
// with -tags stack: the same loop on urfave/cli, with the libraries ask is
// built on linked in and ask's signal handlers) it runs that third, to tell
// how much of ask's start is the stack's. With -loopbench (a test binary of
// internal/loop) it also reports how much longer a request from ten times
// the messages takes to build.
package main

import (
	"bufio"
	"bytes"
	"cmp"
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
	"strconv"
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
	// floorLimit, when not zero, runs scripts/floor beside ask with the
	// same arguments; ask's median wall time may be at most this many
	// times the floor's. -1: the ratio is reported, with no limit.
	floorLimit float64
}

var scenarios = []scenario{
	{name: "`ask --version`", args: []string{"--version"}, floorLimit: startLimit},
	{name: "one-shot answer", fake: []string{"-calls", "0", "-answer", "Hello."},
		args: []string{"say hello"}, requests: 1, floorLimit: startLimit},
	{name: "5 shell tool calls", fake: []string{"-calls", "5", "-tool", "shell", "-args", `{"command":"echo step %d"}`},
		args: []string{"run five commands"}, requests: 6, floorLimit: -1},
	{name: "20-step loop (read_file)", fake: []string{"-calls", "19", "-tool", "read_file", "-args", `{"path":"files/f%d.txt"}`},
		args: []string{"--max-steps", "20", "read twenty files"}, requests: 20},
	{name: "read a 50 MB file", fake: []string{"-calls", "1", "-tool", "read_file", "-args", `{"path":"big.txt"}`},
		args: []string{"read the big file"}, requests: 2},
}

// startLimit is the most ask's start may cost over the floor's: `ask
// --version` and a one-shot answer within 1.5 times the floor's wall time.
const startLimit = 1.5

// stackLimit is the most ask's start may cost over the same loop on ask's
// stack (issue 39).
const stackLimit = 1.35

// shellFloor is the reference row: the shell tool's own work, /bin/sh
// running one echo, without ask.
const shellFloor = "`sh -c 'echo step 1'` alone"

// minRuns is the fewest runs a median is taken over: issue 9 asks for
// medians over at least 10 runs, and fewer say little on a shared machine.
const minRuns = 10

// timeBin is GNU time, which cross-checks peak RSS when it is installed.
const timeBin = "/usr/bin/time"

// growthBench and growthMetric name BenchmarkBuildRequestGrowth in
// internal/loop/bench_test.go and the unit of the ratio it reports.
const (
	growthBench  = "BenchmarkBuildRequestGrowth"
	growthMetric = "x-time-10x-messages"
	growthLimit  = 12.0 // issue 9: ten times the messages in at most twelve times the time
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "benchrun: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	askBin := flag.String("ask", "", "the ask binary to measure")
	fakeBin := flag.String("fake", "", "the scripts/fakeprovider binary")
	floorBin := flag.String("floor", "", "the scripts/floor binary, measured beside ask where a scenario names it")
	stackBin := flag.String("stack", "", "scripts/floor built with -tags stack, measured beside the floor")
	loopBench := flag.String("loopbench", "", "a test binary of internal/loop (go test -c), to report the request-build growth")
	runs := flag.Int("runs", minRuns, "measured runs of each scenario (after one warm-up run); at least 10")
	rounds := flag.Int("rounds", 1, "rounds of the start scenarios, each after the first with fresh copies of the binaries and a fresh work directory; with more than one, ask's ratios to the floors are the median over the rounds")
	var extraEnv envList
	flag.Var(&extraEnv, "env", "add `KEY=VALUE` to ask's environment, such as GOGC=400; repeatable")
	flag.Parse()
	if *askBin == "" || *fakeBin == "" {
		return errors.New("give -ask and -fake (scripts/bench.sh builds both)")
	}
	if *stackBin != "" && *floorBin == "" {
		return errors.New("-stack is measured against the floor: give -floor too")
	}
	if err := checkRuns(*runs); err != nil {
		return err
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d: give at least one round", *rounds)
	}
	loadBefore := loadAverage()
	_, err := os.Stat(timeBin)
	hasTime := err == nil
	work, err := os.MkdirTemp("", "ask-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := makeWorkdir(work); err != nil {
		return fmt.Errorf("prepare the work directory: %w", err)
	}

	var results []result
	shell := func(wrap []string) *exec.Cmd {
		argv := append(slices.Clone(wrap), "/bin/sh", "-c", "echo step 1")
		return exec.Command(argv[0], argv[1:]...)
	}
	floor, err := measure(*runs, func() (sample, error) { return runOnce(shell(nil), nil) })
	if err == nil && hasTime {
		floor.timeRSSKB, err = timedRSS(work, func(wrap []string) (sample, error) { return runOnce(shell(wrap), nil) })
	}
	if err != nil {
		return fmt.Errorf("%s: %w", shellFloor, err)
	}
	results = append(results, result{name: shellFloor, stats: floor})
	for _, sc := range scenarios {
		bins := []string{*askBin}
		if *floorBin != "" && sc.floorLimit != 0 {
			bins = append(bins, *floorBin)
			if *stackBin != "" {
				bins = append(bins, *stackBin)
			}
		}
		st, err := measureScenario(sc, bins, *fakeBin, work, *runs, extraEnv, hasTime)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.name, err)
		}
		res := result{name: sc.name, stats: st[0], requests: sc.requests, floorLimit: sc.floorLimit}
		if len(st) > 1 {
			res.floor = &st[1]
		}
		if len(st) > 2 {
			res.stack = &st[2]
		}
		results = append(results, res)
	}
	var spreads []spread
	if *floorBin != "" {
		bins := []string{*askBin, *floorBin}
		if *stackBin != "" {
			bins = append(bins, *stackBin)
		}
		if spreads, err = measureRounds(*rounds, results, bins, *fakeBin, *runs, extraEnv); err != nil {
			return err
		}
	}
	var growth []growthResult
	if *loopBench != "" {
		if growth, err = measureGrowth(*loopBench, *runs); err != nil {
			return fmt.Errorf("%s: %w", growthBench, err)
		}
	}
	printReport(os.Stdout, report{results: results, spreads: spreads, growth: growth, runs: *runs, askBin: *askBin, extraEnv: extraEnv,
		hasTime: hasTime, loadBefore: loadBefore, loadAfter: loadAverage()})
	return nil
}

// checkRuns refuses fewer runs than a median needs here.
func checkRuns(runs int) error {
	if runs < minRuns {
		return fmt.Errorf("-runs %d: the figures are medians over at least %d runs (issue 9); give -runs %d or more", runs, minRuns, minRuns)
	}
	return nil
}

// timedRSS runs a scenario once more under /usr/bin/time and returns the
// peak RSS it reports, in KB. GNU time starts the command with fork, not
// vfork, so its figure is the command's own even when that is below
// benchrun's peak. run starts the scenario with wrap before its argv.
func timedRSS(work string, run func(wrap []string) (sample, error)) (int64, error) {
	out := filepath.Join(work, "time.out")
	if _, err := run([]string{timeBin, "-f", "%M", "-o", out}); err != nil {
		return 0, fmt.Errorf("under %s: %w", timeBin, err)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		return 0, err
	}
	return parseTimeRSS(data)
}

// parseTimeRSS reads what `/usr/bin/time -f %M` wrote: the figure is the
// last line, after a note about a non-zero exit status if there was one.
func parseTimeRSS(data []byte) (int64, error) {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	kb, err := strconv.ParseInt(strings.TrimSpace(lines[len(lines)-1]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s -f %%M wrote %q: %w", timeBin, data, err)
	}
	return kb, nil
}

// growthResult is BenchmarkBuildRequestGrowth's ratio for one protocol.
type growthResult struct {
	protocol string
	ratio    float64
}

// measureGrowth runs BenchmarkBuildRequestGrowth from a test binary of
// internal/loop: for each protocol, the fastest of runs builds of a
// 10,000-message request over the fastest of a 1,000-message one, in CPU
// time of the thread. A ratio of times belongs here and not in a test: it
// depends on the machine and its load.
func measureGrowth(testBin string, runs int) ([]growthResult, error) {
	cmd := exec.Command(testBin, "-test.run", "^$", "-test.bench", "^"+growthBench+"$", "-test.benchtime", fmt.Sprintf("%dx", runs))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%v: %s%s", err, out, stderr.Bytes())
	}
	return parseGrowth(out)
}

// parseGrowth reads the ratios from the benchmark's output, lines such as
// "BenchmarkBuildRequestGrowth/openai-2  10  30038148 ns/op  9.570 x-time-10x-messages".
func parseGrowth(out []byte) ([]growthResult, error) {
	var rs []growthResult
	for _, line := range strings.Split(string(out), "\n") {
		name, ok := strings.CutPrefix(line, growthBench+"/")
		if !ok {
			continue
		}
		f := strings.Fields(name)
		for i := 1; i < len(f); i++ {
			if f[i] != growthMetric {
				continue
			}
			ratio, err := strconv.ParseFloat(f[i-1], 64)
			if err != nil {
				return nil, fmt.Errorf("cannot read %q: %w", line, err)
			}
			// Benchmark names end in -GOMAXPROCS.
			protocol := f[0]
			if k := strings.LastIndexByte(protocol, '-'); k > 0 {
				protocol = protocol[:k]
			}
			rs = append(rs, growthResult{protocol: protocol, ratio: ratio})
		}
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("no %s metric in its output:\n%s", growthMetric, out)
	}
	return rs, nil
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
	// answer is from the last reply to the first byte on stdout (ask
	// prints its answer whole, with --quiet); -1 when nothing came.
	answer     time.Duration
	firstBytes int
	requests   int
}

// stats are the medians over a scenario's runs.
type stats struct {
	wall, cpu, firstRequest, gap, tail, answer time.Duration
	rssKB                                      int64
	rssFloor                                   bool
	firstBytes                                 int
	gapCount                                   int
	requestsPerRun                             []int
	// timeRSSKB is /usr/bin/time's peak RSS of one more run; 0 when it
	// is not installed.
	timeRSSKB int64
}

type result struct {
	name     string
	stats    stats
	requests int
	// floor is scripts/floor's figures in the same scenario, if measured,
	// and stack the floor's built on ask's stack (-tags stack).
	floor, stack *stats
	floorLimit   float64
}

// measureScenario starts the scenario's fake provider, runs each of bins
// (ask, then the floors if given) once to warm caches, then runs them in
// turn, runs times each, so that a change in the machine's load falls on
// all alike, and ask once more under /usr/bin/time when hasTime. It
// returns the stats of each of bins.
func measureScenario(sc scenario, bins []string, fakeBin, work string, runs int, extraEnv []string, hasTime bool) ([]stats, error) {
	env := append([]string{"PATH=/usr/bin:/bin", "HOME=" + filepath.Join(work, "home"), "OPENAI_API_KEY=fake-bench-not-a-key"}, extraEnv...)
	var fake *fakeServer
	args := sc.args
	if sc.fake != nil {
		var err error
		fake, err = startFake(fakeBin, sc.fake, filepath.Join(work, "requests.jsonl"))
		if err != nil {
			return nil, err
		}
		defer fake.stop()
		args = append([]string{"--provider", "openai", "--base-url", fake.url, "--model", "fake-model",
			"--yes", "--quiet", "--workdir", work}, args...)
	}
	wrappedBin := func(bin string, wrap []string) (sample, error) {
		argv := append(append(slices.Clone(wrap), bin), args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		cmd.Dir = work
		s, err := runOnce(cmd, fake)
		if err == nil && fake != nil && s.requests != sc.requests {
			err = fmt.Errorf("%s made %d requests, want %d (one a step)", filepath.Base(bin), s.requests, sc.requests)
		}
		return s, err
	}
	for _, bin := range bins { // warm-up
		if _, err := wrappedBin(bin, nil); err != nil {
			return nil, err
		}
	}
	samples := make([][]sample, len(bins))
	for range runs {
		for i, bin := range bins {
			s, err := wrappedBin(bin, nil)
			if err != nil {
				return nil, err
			}
			samples[i] = append(samples[i], s)
		}
	}
	st := make([]stats, len(bins))
	for i := range bins {
		st[i] = summarize(samples[i])
	}
	if hasTime {
		var err error
		st[0].timeRSSKB, err = timedRSS(work, func(wrap []string) (sample, error) { return wrappedBin(bins[0], wrap) })
		if err != nil {
			return nil, err
		}
	}
	return st, nil
}

// spread is a start scenario's ratios of ask's median wall time to the
// floors', one a round, and the most the ratio to the floor may be.
type spread struct {
	name         string
	limit        float64
	floor, stack []float64 // stack is empty without -stack
}

// over says what a target's figure is taken over: one round, or the median
// of several.
func (sp spread) over() string {
	if len(sp.floor) < 2 {
		return ""
	}
	return fmt.Sprintf(" (median of %d rounds)", len(sp.floor))
}

// measureRounds gives the start scenarios' ratios to the floors over
// rounds: the first round's, from first, then those of rounds−1 more. One
// round's ratio moves with what the machine, its page cache and its file
// system were doing while it ran, by more than a limit's margin; so each
// further round measures fresh copies of bins (ask, the floor, the stack
// floor) in a fresh work directory, as another bench.sh would.
func measureRounds(rounds int, first []result, bins []string, fakeBin string, runs int, extraEnv []string) ([]spread, error) {
	var spreads []spread
	for _, res := range first {
		if res.floor == nil || res.floorLimit <= 0 {
			continue
		}
		sp := spread{name: res.name, limit: res.floorLimit, floor: []float64{floorRatio(res)}}
		if res.stack != nil {
			sp.stack = []float64{ratio(res.stats.wall, res.stack.wall)}
		}
		spreads = append(spreads, sp)
	}
	for round := 2; round <= rounds; round++ {
		if err := measureRound(spreads, bins, fakeBin, runs, extraEnv); err != nil {
			return nil, fmt.Errorf("round %d: %w", round, err)
		}
	}
	return spreads, nil
}

// measureRound measures each of spreads' scenarios once more, and adds
// the ratios to them.
func measureRound(spreads []spread, bins []string, fakeBin string, runs int, extraEnv []string) error {
	dir, err := os.MkdirTemp("", "ask-bench-round-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	copies, err := copyBinaries(bins, filepath.Join(dir, "bin"))
	if err != nil {
		return err
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(filepath.Join(work, "home"), 0o755); err != nil {
		return err
	}
	for i, sp := range spreads {
		j := slices.IndexFunc(scenarios, func(sc scenario) bool { return sc.name == sp.name })
		st, err := measureScenario(scenarios[j], copies, fakeBin, work, runs, extraEnv, false)
		if err != nil {
			return fmt.Errorf("%s: %w", sp.name, err)
		}
		spreads[i].floor = append(spreads[i].floor, ratio(st[0].wall, st[1].wall))
		if len(st) > 2 {
			spreads[i].stack = append(spreads[i].stack, ratio(st[0].wall, st[2].wall))
		}
	}
	return nil
}

// copyBinaries copies each of bins into dir as an install would, with
// write(2), and returns the copies' paths (bench.sh says why a copy).
func copyBinaries(bins []string, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var copies []string
	for i, bin := range bins {
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		// Numbered: the floors may share a name in different directories.
		to := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(bin)))
		if err := os.WriteFile(to, data, 0o755); err != nil {
			return nil, err
		}
		copies = append(copies, to)
	}
	return copies, nil
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
	return summarize(samples), nil
}

// summarize takes the medians of a scenario's samples.
func summarize(samples []sample) stats {
	var st stats
	var wall, cpu, first, gaps, tails, answers []time.Duration
	var rss, sizes []int64
	for _, s := range samples {
		wall, cpu = append(wall, s.wall), append(cpu, s.cpu)
		rss = append(rss, s.rssKB)
		if s.requests > 0 {
			first = append(first, s.firstRequest)
			tails = append(tails, s.tail)
			if s.answer >= 0 {
				answers = append(answers, s.answer)
			}
			sizes = append(sizes, int64(s.firstBytes))
		}
		st.rssFloor = st.rssFloor || s.rssFloor
		gaps = append(gaps, s.gaps...)
		st.requestsPerRun = append(st.requestsPerRun, s.requests)
	}
	st.wall, st.cpu, st.firstRequest, st.gap, st.tail = median(wall), median(cpu), median(first), median(gaps), median(tails)
	st.answer = median(answers)
	st.rssKB, st.firstBytes, st.gapCount = median(rss), int(median(sizes)), len(gaps)
	return st
}

// runOnce runs cmd to completion and reads the requests it made from the
// fake provider's log.
func runOnce(cmd *exec.Cmd, fake *fakeServer) (sample, error) {
	var stderr bytes.Buffer
	stdout := &firstWrite{}
	cmd.Stdout, cmd.Stderr = stdout, &stderr
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
		s.answer = -1
		if !stdout.at.IsZero() {
			s.answer = time.Duration(stdout.at.UnixNano() - reqs[len(reqs)-1].Replied)
		}
	}
	return s, nil
}

// firstWrite discards what it is given, and notes when the first of it
// came.
type firstWrite struct{ at time.Time }

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.at.IsZero() && len(p) > 0 {
		w.at = time.Now()
	}
	return len(p), nil
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

func median[T int64 | time.Duration | float64](xs []T) T {
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

// report is everything printReport shows.
type report struct {
	results               []result
	spreads               []spread
	growth                []growthResult
	runs                  int
	askBin                string
	extraEnv              []string
	hasTime               bool
	loadBefore, loadAfter string
}

func printReport(w io.Writer, r report) {
	size := "?"
	if fi, err := os.Stat(r.askBin); err == nil {
		size = fmt.Sprintf("%.1f MB", float64(fi.Size())/(1<<20))
	}
	fmt.Fprintf(w, "Date: %s  \n", time.Now().UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(w, "Machine: %d CPUs, %s, %s/%s, %s  \n", runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(w, "Commit: %s; `ask --version`: %s  \n", gitCommit(), askVersion(r.askBin))
	fmt.Fprintf(w, "ask binary: %s; load average at start %s, at end %s  \n", size, r.loadBefore, r.loadAfter)
	if len(r.extraEnv) > 0 {
		fmt.Fprintf(w, "Extra environment: %s  \n", strings.Join(r.extraEnv, " "))
	}
	fmt.Fprintf(w, "Medians over %d runs after one warm-up run; gaps are the median over every step of every run.\n\n", r.runs)
	columns := []string{"scenario", "wall", "CPU (user+sys)", "to first request", "gap between steps", "last reply to answer", "last reply to exit", "peak RSS"}
	if r.hasTime {
		columns = append(columns, "peak RSS, /usr/bin/time")
	}
	tableHead(w, append(columns, "first request", "requests/run")...)
	for _, res := range r.results {
		st := res.stats
		first, gap, answer, tail, bytes, reqs := "–", "–", "–", "–", "–", "–"
		if res.requests > 0 {
			first, answer, tail = ms(st.firstRequest), ms(st.answer), ms(st.tail)
			bytes = fmt.Sprintf("%.1f KB", float64(st.firstBytes)/1024)
			reqs = perRun(st.requestsPerRun)
		}
		if st.gapCount > 0 {
			gap = ms(st.gap)
		}
		rss := mb(st.rssKB)
		if st.rssFloor {
			rss = "≤ " + rss
		}
		cells := []string{res.name, ms(st.wall), ms(st.cpu), first, gap, answer, tail, rss}
		if r.hasTime {
			cells = append(cells, mb(st.timeRSSKB))
		}
		tableRow(w, append(cells, bytes, reqs)...)
	}
	fmt.Fprintln(w)
	if r.hasTime {
		fmt.Fprintln(w, "The /usr/bin/time column is one more run of each scenario under GNU time (`-f %M`), a cross-check of the rusage column.")
	} else {
		fmt.Fprintf(w, "%s is not installed (Debian package \"time\"): peak RSS is not cross-checked.\n", timeBin)
	}
	printFloor(w, r.results)
	printRounds(w, r.spreads)
	if len(r.growth) > 0 {
		fmt.Fprintf(w, "\nRequest build from 10× the messages (%s, 1,000 against 10,000 messages: the fastest of %d builds of each, CPU time of the thread):\n\n", growthBench, r.runs)
		for _, g := range r.growth {
			fmt.Fprintf(w, "- request build 10× messages (%s): %.1f× time (limit %.0f×)%s\n", g.protocol, g.ratio, growthLimit, unmet(g.ratio, growthLimit))
		}
	}
	fmt.Fprintln(w)
	printTargets(w, r.results, r.spreads, r.growth)
}

// printFloor sets ask's medians beside scripts/floor's, measured in the
// same runs, as ratios of wall time (and of CPU time, which the machine's
// other work disturbs less).
func printFloor(w io.Writer, results []result) {
	var rows []result
	for _, res := range results {
		if res.floor != nil {
			rows = append(rows, res)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "\nask beside scripts/floor (a tool-calling loop in 150 lines of the standard library), the two run in turn:")
	fmt.Fprintln(w)
	tableHead(w, "scenario", "ask wall", "floor wall", "ask/floor wall", "ask CPU", "floor CPU", "ask/floor CPU", "limit (wall)")
	for _, res := range rows {
		limit := "–"
		if res.floorLimit > 0 {
			limit = fmt.Sprintf("%.1f×%s", res.floorLimit, unmet(floorRatio(res), res.floorLimit))
		}
		tableRow(w, res.name, ms(res.stats.wall), ms(res.floor.wall), times(floorRatio(res)),
			ms(res.stats.cpu), ms(res.floor.cpu), times(ratio(res.stats.cpu, res.floor.cpu)), limit)
	}
	if rows[0].stack == nil {
		return
	}
	fmt.Fprintln(w, "\nThe floor on ask's stack (scripts/floor -tags stack: urfave/cli for its flags, the libraries ask is built on linked in, ask's signal handlers), in the same runs: what of ask's start is the stack's, and what is ask's own:")
	fmt.Fprintln(w)
	tableHead(w, "scenario", "floor wall", "floor on the stack", "stack/floor", "ask wall", "ask/stack")
	for _, res := range rows {
		tableRow(w, res.name, ms(res.floor.wall), ms(res.stack.wall), times(ratio(res.stack.wall, res.floor.wall)),
			ms(res.stats.wall), times(ratio(res.stats.wall, res.stack.wall)))
	}
}

// printRounds gives the start scenarios' ratios over the rounds, when
// there was more than one.
func printRounds(w io.Writer, spreads []spread) {
	if len(spreads) == 0 || len(spreads[0].floor) < 2 {
		return
	}
	fmt.Fprintf(w, "\nask's start over the floors in %d rounds, the first the one above, each after it with fresh copies of the binaries and a fresh work directory: the median is the figure a limit is held to, the range how far one round strays.\n\n", len(spreads[0].floor))
	tableHead(w, "scenario", "ask/floor, median", "ask/floor, range", "ask/stack, median", "ask/stack, range")
	for _, sp := range spreads {
		stackMedian, stackRange := "–", "–"
		if len(sp.stack) > 0 {
			stackMedian, stackRange = times(median(sp.stack)), span(sp.stack)
		}
		tableRow(w, sp.name, times(median(sp.floor)), span(sp.floor), stackMedian, stackRange)
	}
}

// span is the least and the most of xs.
func span(xs []float64) string {
	return fmt.Sprintf("%.2f–%.2f×", slices.Min(xs), slices.Max(xs))
}

// tableHead writes a markdown table's header: the first column, which
// names the row, aligned left, the figures after it right.
func tableHead(w io.Writer, columns ...string) {
	tableRow(w, columns...)
	fmt.Fprintln(w, "|---|"+strings.Repeat("---:|", len(columns)-1))
}

func tableRow(w io.Writer, cells ...string) {
	fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
}

// times is a ratio as the tables print it.
func times(r float64) string { return fmt.Sprintf("%.2f×", r) }

// floorRatio is ask's median wall time over the floor's.
func floorRatio(res result) float64 { return ratio(res.stats.wall, res.floor.wall) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// unmet notes by how much a figure is over its limit.
func unmet(got, limit float64) string {
	if got <= limit {
		return ""
	}
	return fmt.Sprintf(" — over by %.1f×", got/limit)
}

func mb(kb int64) string { return fmt.Sprintf("%.1f MB", float64(kb)/1024) }

// gitCommit is the commit measured, noting uncommitted changes: the binary
// is built from the working tree. It only reads (--no-optional-locks
// keeps git status from refreshing the index of a shared checkout).
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "unknown (not a git checkout)"
	}
	commit := strings.TrimSpace(string(out))
	status, err := exec.Command("git", "--no-optional-locks", "status", "--porcelain").Output()
	switch {
	case err != nil:
		commit += " (tree state unknown)"
	case len(bytes.TrimSpace(status)) > 0:
		commit += " with uncommitted changes (dirty tree)"
	}
	return commit
}

// askVersion is what the measured binary says it is.
func askVersion(askBin string) string {
	out, err := exec.Command(askBin, "--version").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// perRun shows the requests of every run: one number when they agree.
func perRun(counts []int) string {
	lo, hi := slices.Min(counts), slices.Max(counts)
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// printTargets checks the medians against the targets of issue 9, and the
// start's ratios to the floors (issues 9 and 39) as spreads holds them.
func printTargets(w io.Writer, results []result, spreads []spread, growth []growthResult) {
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
	for _, sp := range spreads {
		checks = append(checks, check{sp.name + ": ask's wall over the floor's" + sp.over(), median(sp.floor), sp.limit, "×"})
		if len(sp.stack) > 0 {
			checks = append(checks, check{sp.name + ": ask's wall over the same loop on ask's stack" + sp.over(), median(sp.stack), stackLimit, "×"})
		}
	}
	if len(growth) > 0 {
		worst := slices.MaxFunc(growth, func(a, b growthResult) int { return cmp.Compare(a.ratio, b.ratio) })
		checks = append(checks, check{fmt.Sprintf("request build, 10× the messages (slowest protocol: %s)", worst.protocol), worst.ratio, growthLimit, "×"})
	}
	fmt.Fprintln(w, "| target | median | limit | met |")
	fmt.Fprintln(w, "|---|---:|---:|:---:|")
	for _, c := range checks {
		mark := "yes"
		if c.got > c.want {
			mark = fmt.Sprintf("no (%.1f×)", c.got/c.want)
		}
		sep, figure := " ", fmt.Sprintf("%.1f", c.got)
		if c.unit == "×" {
			// A ratio's limit may be 0.01× from it: two decimals.
			sep, figure = "", fmt.Sprintf("%.2f", c.got)
		}
		fmt.Fprintf(w, "| %s | %s%s%s | %g%s%s | %s |\n", c.what, figure, sep, c.unit, c.want, sep, c.unit, mark)
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
