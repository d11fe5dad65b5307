package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Package initialisation runs in every process, before ask reads its first
// flag, so it is paid by every question, script line and CI step. The
// budgets are in bytes and allocations, which do not depend on the machine
// or its load. The per-package budget keeps each init under 0.5 ms on the
// bench machine: the costliest one it lets through, blackfriday (urfave/cli's
// markdown package, in the build without -tags urfave_cli_no_docs), is
// 214 KB and 762 allocations in 0.45 ms. The validator ask used before
// github.com/google/jsonschema-go, santhosh-tekuri/jsonschema/v6, compiled
// its meta-schemas at init: 1.7 MB and 21,000 allocations in 3.5 ms.
const (
	initMaxBytesPerPackage  = 256 << 10
	initMaxAllocsPerPackage = 800
	initMaxBytesTotal       = 640 << 10
	initMaxAllocsTotal      = 3000
)

// initLine is one line of GODEBUG=inittrace=1:
// "init net/http @6.8 ms, 0.033 ms clock, 4712 bytes, 49 allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

type initCost struct {
	pkg           string
	bytes, allocs int64
}

// parseInitTrace reads the init lines of GODEBUG=inittrace=1 output and
// ignores every other line.
func parseInitTrace(out []byte) ([]initCost, error) {
	var costs []initCost
	for _, line := range strings.Split(string(out), "\n") {
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("unexpected inittrace line %q", line)
		}
		b, _ := strconv.ParseInt(m[2], 10, 64)
		a, _ := strconv.ParseInt(m[3], 10, 64)
		costs = append(costs, initCost{pkg: m[1], bytes: b, allocs: a})
	}
	return costs, nil
}

func TestParseInitTrace(t *testing.T) {
	t.Parallel()
	out := "ask version dev\n" +
		"init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs\n" +
		"init github.com/example/validator @3.1 ms, 3.6 ms clock, 1700688 bytes, 21279 allocs\n"
	got, err := parseInitTrace([]byte(out))
	want := []initCost{{"internal/bytealg", 0, 0}, {"github.com/example/validator", 1700688, 21279}}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("parseInitTrace: %v, %v; want %v", got, err, want)
	}
	if _, err := parseInitTrace([]byte("init x @1 ms, 2 ms clock, many bytes, 3 allocs\n")); err == nil {
		t.Error("parseInitTrace accepted a line it cannot read")
	}
}

// TestInitBudget builds ask as the README builds it, runs `ask --version`
// with GODEBUG=inittrace=1 and checks every package's init, and all of them
// together, against the budgets above. It counts; it does not time.
func TestInitBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it builds ask and runs it with inittrace")
	}
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("go not found: %v", err)
		}
		t.Skipf("go not found: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ask")
	// The README's build (CGO_ENABLED=0, no tags), whose packages scripts/test.sh
	// has just compiled: this link reuses them.
	build := exec.Command(goBin, "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "ask version ") {
		t.Fatalf("ask --version: %v, stdout %q, stderr:\n%s", err, out, stderr.Bytes())
	}
	// main answers `ask --version` alone without the command tree; with
	// another flag before it, the tree answers: the two must agree.
	if tree, err := exec.Command(bin, "--quiet", "--version").Output(); err != nil || string(tree) != string(out) {
		t.Errorf("ask --quiet --version: %v, stdout %q; ask --version printed %q", err, tree, out)
	}
	// Nor does it die of SIGPIPE when stdout is closed: it exits 141, as
	// DESIGN §7 has it, quietly.
	for _, args := range [][]string{{"--version"}, {"--quiet", "--version"}} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		cmd := exec.Command(bin, args...)
		cmd.Stdout = w
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		err = cmd.Run()
		w.Close()
		if cmd.ProcessState.ExitCode() != 141 || errOut.Len() > 0 {
			t.Errorf("ask %s into a closed pipe: %v, stderr %q; want exit 141 and nothing said", strings.Join(args, " "), err, errOut.String())
		}
	}
	costs, err := parseInitTrace(stderr.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var total initCost
	seen := false
	for _, c := range costs {
		total.bytes += c.bytes
		total.allocs += c.allocs
		if c.pkg == "github.com/google/jsonschema-go/jsonschema" {
			seen = true
		}
		if c.bytes > initMaxBytesPerPackage || c.allocs > initMaxAllocsPerPackage {
			t.Errorf("init of %s: %d bytes and %d allocations; each package's init may take %d bytes and %d allocations",
				c.pkg, c.bytes, c.allocs, initMaxBytesPerPackage, initMaxAllocsPerPackage)
		}
	}
	if total.bytes > initMaxBytesTotal || total.allocs > initMaxAllocsTotal {
		t.Errorf("all %d inits: %d bytes and %d allocations; together they may take %d bytes and %d allocations",
			len(costs), total.bytes, total.allocs, initMaxBytesTotal, initMaxAllocsTotal)
	}
	// The trace lists a package only when it has work to do at init; the
	// validator has some (its tables of the Schema type's fields), so its
	// absence means the trace was not read.
	if !seen {
		t.Errorf("the trace has no init of github.com/google/jsonschema-go/jsonschema:\n%s", stderr.Bytes())
	}
	t.Logf("%d inits: %d bytes, %d allocations", len(costs), total.bytes, total.allocs)
}
