package main

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCheckRuns(t *testing.T) {
	for _, n := range []int{-1, 0, 1, 9} {
		if err := checkRuns(n); err == nil || !strings.Contains(err.Error(), "at least 10 runs") {
			t.Errorf("checkRuns(%d) = %v, want a refusal naming the least", n, err)
		}
	}
	for _, n := range []int{10, 30} {
		if err := checkRuns(n); err != nil {
			t.Errorf("checkRuns(%d) = %v", n, err)
		}
	}
}

// The output of `loop.test -test.run ^$ -test.bench ^BenchmarkBuildRequestGrowth$`.
const growthOutput = `goos: linux
goarch: amd64
pkg: github.com/ask-cli/ask/internal/loop
cpu: AMD EPYC
BenchmarkBuildRequestGrowth/openai-2        	      10	  30038148 ns/op	         9.570 x-time-10x-messages
BenchmarkBuildRequestGrowth/anthropic-2     	      10	  68122513 ns/op	        12.30 x-time-10x-messages
BenchmarkBuildRequestGrowth/openai-responses-2 	  10	  57851577 ns/op	        13.72 x-time-10x-messages
PASS
`

func TestParseGrowth(t *testing.T) {
	got, err := parseGrowth([]byte(growthOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := []growthResult{{"openai", 9.57}, {"anthropic", 12.3}, {"openai-responses", 13.72}}
	if !slices.Equal(got, want) {
		t.Errorf("parseGrowth = %v, want %v", got, want)
	}
	if _, err := parseGrowth([]byte("PASS\n")); err == nil {
		t.Error("output without the metric was accepted")
	}
}

func TestParseTimeRSS(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"14592\n", 14592, true},
		{"Command exited with non-zero status 1\n8120\n", 8120, true},
		{"", 0, false},
		{"14.5 MB\n", 0, false},
	}
	for _, tt := range tests {
		got, err := parseTimeRSS([]byte(tt.in))
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("parseTimeRSS(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestTimedRSS runs /bin/sh under the real GNU time, as benchrun does.
func TestTimedRSS(t *testing.T) {
	if _, err := os.Stat(timeBin); err != nil {
		t.Skipf("%s is not installed", timeBin)
	}
	kb, err := timedRSS(t.TempDir(), func(wrap []string) (sample, error) {
		argv := append(slices.Clone(wrap), "/bin/sh", "-c", "echo step 1")
		return runOnce(exec.Command(argv[0], argv[1:]...), nil)
	})
	// A shell's peak RSS is some hundreds of KB to a few MB.
	if err != nil || kb < 100 || kb > 100<<10 {
		t.Errorf("timedRSS = %d KB, %v", kb, err)
	}
}

// TestReportTables: every row of the results table has the header's
// cells, with the /usr/bin/time column or without it, and the growth
// ratios are printed with their limit.
func TestReportTables(t *testing.T) {
	results := []result{{name: shellFloor, stats: stats{rssKB: 7000, rssFloor: true, timeRSSKB: 1500}}}
	for _, sc := range scenarios {
		results = append(results, result{name: sc.name, requests: sc.requests,
			stats: stats{rssKB: 15000, timeRSSKB: 15100, firstBytes: 3000, requestsPerRun: []int{sc.requests}}})
	}
	growth := []growthResult{{"openai", 9.6}, {"gemini", 14.4}}
	for _, hasTime := range []bool{true, false} {
		var b strings.Builder
		printReport(&b, report{results: results, growth: growth, runs: 10, askBin: "/nonexistent/ask", hasTime: hasTime})
		out := b.String()
		var table []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "| scenario") || (len(table) > 0 && strings.HasPrefix(line, "|")) {
				table = append(table, line)
			} else if len(table) > 0 {
				break
			}
		}
		if len(table) != len(results)+2 {
			t.Fatalf("hasTime %v: table of %d lines, want %d:\n%s", hasTime, len(table), len(results)+2, out)
		}
		cells := strings.Count(table[0], "|")
		for _, row := range table[1:] {
			if strings.Count(row, "|") != cells {
				t.Errorf("hasTime %v: row %q has not the header's %d cells", hasTime, row, cells-1)
			}
		}
		if got := strings.Contains(table[0], "/usr/bin/time"); got != hasTime {
			t.Errorf("hasTime %v: header %q", hasTime, table[0])
		}
		if !hasTime && !strings.Contains(out, "/usr/bin/time is not installed") {
			t.Errorf("no note that RSS is not cross-checked:\n%s", out)
		}
		for _, want := range []string{
			"- request build 10× messages (openai): 9.6× time (limit 12×)\n",
			"- request build 10× messages (gemini): 14.4× time (limit 12×) — over by 1.2×\n",
			"| request build, 10× the messages (slowest protocol: gemini) | 14.40× | 12× | no (1.2×) |",
			"Commit: ",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
	}
}

func TestPrintFloor(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	results := []result{
		{name: "`ask --version`", stats: stats{wall: ms(6), cpu: ms(6)}, floor: &stats{wall: ms(4), cpu: ms(3)}, floorLimit: 1.5},
		{name: "one-shot answer", stats: stats{wall: ms(9), cpu: ms(8)}, floor: &stats{wall: ms(5), cpu: ms(4)}, floorLimit: 1.5},
		{name: "5 shell tool calls", stats: stats{wall: ms(20)}, floor: &stats{wall: ms(10)}, floorLimit: -1},
		{name: "20-step loop (read_file)", stats: stats{wall: ms(30)}},
	}
	var b strings.Builder
	printFloor(&b, results)
	containsAll(t, b.String(),
		"| `ask --version` | 6.0 ms | 4.0 ms | 1.50× | 6.0 ms | 3.0 ms | 2.00× | 1.5× |",
		"| one-shot answer | 9.0 ms | 5.0 ms | 1.80× | 8.0 ms | 4.0 ms | 2.00× | 1.5× — over by 1.2× |",
		"| 5 shell tool calls | 20.0 ms | 10.0 ms | 2.00× |",
	)
	if strings.Contains(b.String(), "20-step") {
		t.Errorf("a scenario without the floor has a row:\n%s", b.String())
	}
	if strings.Contains(b.String(), "on the stack") {
		t.Errorf("a stack table without -stack:\n%s", b.String())
	}
	for i := range results[:3] {
		results[i].stack = &stats{wall: ms(float64(i + 7))}
	}
	b.Reset()
	printFloor(&b, results)
	containsAll(t, b.String(),
		"| `ask --version` | 4.0 ms | 7.0 ms | 1.75× | 6.0 ms | 0.86× |",
		"| one-shot answer | 5.0 ms | 8.0 ms | 1.60× | 9.0 ms | 1.12× |",
	)
}

// The answer is timed from the last reply to ask's first byte on stdout,
// apart from the exit: a command that answers and then takes half a second
// to exit has an answer time well under its tail (300 ms leaves the pipe's
// reader 200 ms to be scheduled on a loaded machine).
func TestRunOnceTimesTheAnswerApartFromTheExit(t *testing.T) {
	if _, err := exec.LookPath("date"); err != nil {
		t.Skip("no date(1)")
	}
	t.Parallel()
	log := t.TempDir() + "/requests.jsonl"
	script := `now=$(date +%s%N)
printf '{"step":1,"bytes":10,"arrived_ns":%s,"replied_ns":%s,"status":200}\n' "$now" "$now" >> "$1"
echo answer
sleep 0.5`
	s, err := runOnce(exec.Command("/bin/sh", "-c", script, "sh", log), &fakeServer{log: log})
	if err != nil {
		t.Fatal(err)
	}
	if s.requests != 1 || s.answer < 0 {
		t.Fatalf("requests %d, answer %v: the request or the answer went unseen", s.requests, s.answer)
	}
	if s.tail-s.answer < 300*time.Millisecond {
		t.Errorf("answer %v, exit %v after the reply: want the answer at least 300 ms before the exit", s.answer, s.tail)
	}
}

// The first round's ratios seed the spreads: one for each scenario with a
// floor and a limit, with the stack's when it was measured.
func TestMeasureRoundsStartsWithTheFirstRound(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	first := []result{
		{name: "`ask --version`", stats: stats{wall: ms(6)}, floor: &stats{wall: ms(4)}, stack: &stats{wall: ms(5)}, floorLimit: 1.5},
		{name: "one-shot answer", stats: stats{wall: ms(9)}, floor: &stats{wall: ms(5)}, floorLimit: 1.5},
		{name: "5 shell tool calls", stats: stats{wall: ms(20)}, floor: &stats{wall: ms(10)}, floorLimit: -1},
		{name: "20-step loop (read_file)", stats: stats{wall: ms(30)}},
	}
	got, err := measureRounds(1, first, nil, "", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []spread{
		{name: "`ask --version`", limit: 1.5, floor: []float64{1.5}, stack: []float64{1.2}},
		{name: "one-shot answer", limit: 1.5, floor: []float64{1.8}},
	}
	if len(got) != len(want) {
		t.Fatalf("spreads %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].name != want[i].name || got[i].limit != want[i].limit ||
			!slices.Equal(got[i].floor, want[i].floor) || !slices.Equal(got[i].stack, want[i].stack) {
			t.Errorf("spread %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestPrintRounds(t *testing.T) {
	spreads := []spread{
		{name: "`ask --version`", limit: 1.5, floor: []float64{1.4, 1.2, 1.3}, stack: []float64{1.1, 1.0, 1.2}},
		{name: "one-shot answer", limit: 1.5, floor: []float64{1.6, 1.5, 1.9}},
	}
	var b strings.Builder
	printRounds(&b, spreads)
	containsAll(t, b.String(),
		"in 3 rounds",
		"| `ask --version` | 1.30× | 1.20–1.40× | 1.10× | 1.00–1.20× |",
		"| one-shot answer | 1.60× | 1.50–1.90× | – | – |",
	)
	b.Reset()
	printRounds(&b, []spread{{name: "one-shot answer", floor: []float64{1.6}}})
	if b.Len() != 0 {
		t.Errorf("a table of one round:\n%s", b.String())
	}
}

// The targets hold the median over the rounds to the limits, not one
// round's ratio: here the first round is over both, the median under.
func TestTargetsHoldTheMedianOfTheRounds(t *testing.T) {
	spreads := []spread{{name: "one-shot answer", limit: 1.5, floor: []float64{1.6, 1.3, 1.4}, stack: []float64{1.40, 1.30, 1.34}}}
	var b strings.Builder
	printTargets(&b, nil, spreads, nil)
	containsAll(t, b.String(),
		"| one-shot answer: ask's wall over the floor's (median of 3 rounds) | 1.40× | 1.5× | yes |",
		"| one-shot answer: ask's wall over the same loop on ask's stack (median of 3 rounds) | 1.34× | 1.35× | yes |",
	)
	b.Reset()
	printTargets(&b, nil, []spread{{name: "one-shot answer", limit: 1.5, floor: []float64{1.6}, stack: []float64{1.36}}}, nil)
	containsAll(t, b.String(), "| one-shot answer: ask's wall over the same loop on ask's stack | 1.36× | 1.35× | no (1.0×) |")
}

// A round's binaries are copies written anew, executable, that keep their
// contents; two of one name do not overwrite each other.
func TestCopyBinaries(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	var bins []string
	for i, sub := range []string{"a", "b"} {
		if err := os.MkdirAll(src+"/"+sub, 0o755); err != nil {
			t.Fatal(err)
		}
		bin := src + "/" + sub + "/floor"
		if err := os.WriteFile(bin, []byte{byte('0' + i)}, 0o755); err != nil {
			t.Fatal(err)
		}
		bins = append(bins, bin)
	}
	copies, err := copyBinaries(bins, t.TempDir()+"/bin")
	if err != nil || len(copies) != len(bins) {
		t.Fatalf("copyBinaries = %q, %v; want %d copies", copies, err, len(bins))
	}
	for i, c := range copies {
		data, err := os.ReadFile(c)
		info, serr := os.Stat(c)
		if err != nil || serr != nil || string(data) != string(rune('0'+i)) || info.Mode().Perm()&0o100 == 0 {
			t.Errorf("copy %d (%s): %q, %v, %v", i, c, data, err, serr)
		}
	}
}

// containsAll fails t for each of want that out lacks.
func containsAll(t *testing.T, out string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in:\n%s", w, out)
		}
	}
}
