package schema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	santhosh "github.com/santhosh-tekuri/jsonschema/v6"
)

// The suite test compares ask's validator, github.com/google/jsonschema-go
// as Compile sets it up, with santhosh-tekuri/jsonschema/v6, the validator
// ask used before. santhosh is a dependency of this test only: the binary
// does not link it (its package init compiles every draft's meta-schemas,
// 1.7 MB and 21,000 allocations in every process).

var update = flag.Bool("update", false, "rewrite testdata/known-failures.txt and testdata/suite.txt from this run")

const (
	// knownFailures lists the cases of the JSON Schema Test Suite that ask's
	// validator fails; TestSuite fails on any other failure, and on a
	// listed case that passes.
	knownFailures = "testdata/known-failures.txt"
	// suiteTable holds the passes per keyword of both validators.
	suiteTable = "testdata/suite.txt"
)

// suiteDir returns the official JSON Schema Test Suite in ../shared beside
// the repository. A fresh clone has nothing beside it, and the README's
// test command must pass there: the test is skipped, saying what is
// missing, when the suite is absent.
func suiteDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..")
	dir := filepath.Join(root, "..", "shared", "jsonschema-test-suite")
	if _, err := os.Stat(filepath.Join(dir, "tests")); err != nil {
		t.Skipf("the JSON Schema Test Suite is not beside the repository (put it at ../shared/jsonschema-test-suite to run this): %v", err)
	}
	return dir
}

// A suiteGroup is one schema of a suite file with the instances tested
// against it.
type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// The suite's schemas expect its remotes/ folder at http://localhost:1234/.
const (
	remoteBase = "http://localhost:1234/"
	suiteURL   = remoteBase + "ask-suite-schema.json"
)

// A validator runs one group: for each test, whether its answer is the
// expected one. A schema that does not compile fails every test of the
// group; a panic fails what it hit.
type validator struct {
	name string
	run  func(g suiteGroup, draft, remotes string) []bool
}

var validators = []validator{
	{"google/jsonschema-go (ask)", runAsk},
	{"santhosh-tekuri/jsonschema/v6", runSanthosh},
}

const draft7 = "http://json-schema.org/draft-07/schema#"

// runAsk compiles with compile, Compile's checks and all, and loads the
// suite's remotes where ask refuses every remote reference. A draft-07
// schema without "$schema" gets one: ask reads such a schema as 2020-12.
func runAsk(g suiteGroup, draft, remotes string) []bool {
	ok := make([]bool, len(g.Tests))
	raw := g.Schema
	if draft == "draft7" {
		raw = withDraft7(raw)
	}
	load := func(u *url.URL) (*jsonschema.Schema, error) {
		data, err := readRemote(remotes, u.String())
		if err != nil {
			return nil, err
		}
		if draft == "draft7" {
			data = withDraft7(data)
		}
		var s jsonschema.Schema
		return &s, json.Unmarshal(data, &s)
	}
	s, err := safely(func() (*Schema, error) { return compile(raw, suiteURL, load) })
	if err != nil {
		return ok
	}
	for i, tc := range g.Tests {
		v, err := Decode(tc.Data)
		if err != nil {
			continue
		}
		valid, err := safely(func() (bool, error) { return s.Validate(v) == nil, nil })
		ok[i] = err == nil && valid == tc.Valid
	}
	return ok
}

func runSanthosh(g suiteGroup, draft, remotes string) []bool {
	ok := make([]bool, len(g.Tests))
	doc, err := santhosh.UnmarshalJSON(bytes.NewReader(g.Schema))
	if err != nil {
		return ok
	}
	c := santhosh.NewCompiler()
	c.DefaultDraft(santhosh.Draft2020)
	if draft == "draft7" {
		c.DefaultDraft(santhosh.Draft7)
	}
	c.UseLoader(santhoshLoader(remotes))
	if err := c.AddResource(suiteURL, doc); err != nil {
		return ok
	}
	s, err := safely(func() (*santhosh.Schema, error) { return c.Compile(suiteURL) })
	if err != nil {
		return ok
	}
	for i, tc := range g.Tests {
		v, err := santhosh.UnmarshalJSON(bytes.NewReader(tc.Data))
		if err != nil {
			continue
		}
		valid, err := safely(func() (bool, error) { return s.Validate(v) == nil, nil })
		ok[i] = err == nil && valid == tc.Valid
	}
	return ok
}

type santhoshLoader string

func (dir santhoshLoader) Load(u string) (any, error) {
	data, err := readRemote(string(dir), u)
	if err != nil {
		return nil, err
	}
	return santhosh.UnmarshalJSON(bytes.NewReader(data))
}

// readRemote reads a schema of the suite's remotes/ folder, and nothing
// else.
func readRemote(dir, u string) ([]byte, error) {
	rest, ok := strings.CutPrefix(u, remoteBase)
	if !ok {
		return nil, fmt.Errorf("no remote schema %s in the suite", u)
	}
	return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rest)))
}

// withDraft7 adds "$schema": draft-07 to an object schema without one.
func withDraft7(raw []byte) []byte {
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil || obj["$schema"] != nil {
		return raw
	}
	obj["$schema"], _ = json.Marshal(draft7)
	out, err := json.Marshal(obj)
	if err != nil {
		return raw
	}
	return out
}

func safely[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return f()
}

// tally counts the passes of one keyword (file) for each validator.
type tally struct {
	keyword     string
	pass, total []int
}

// TestSuite runs the official JSON Schema Test Suite for draft 2020-12 and
// draft-07, required and optional, through both validators. Each case is
// named by file, group and test index (draft7/ref.json#3.1); the failures
// of ask's validator must be exactly those in testdata/known-failures.txt.
// testdata/suite.txt has the passes per keyword of both; -update rewrites
// both files, and -v prints the table.
func TestSuite(t *testing.T) {
	dir := suiteDir(t)
	var failed []string
	descr := map[string]string{}
	var rows []tally
	for _, draft := range []string{"draft2020-12", "draft7"} {
		root := filepath.Join(dir, "tests", draft)
		var files []string
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".json") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatalf("no test files under %s", root)
		}
		slices.Sort(files)
		for _, file := range files {
			rel, _ := filepath.Rel(filepath.Join(dir, "tests"), file)
			rel = filepath.ToSlash(rel)
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var groups []suiteGroup
			if err := json.Unmarshal(data, &groups); err != nil {
				t.Fatalf("%s: %v", rel, err)
			}
			row := tally{keyword: strings.TrimSuffix(rel, ".json"), pass: make([]int, len(validators)), total: make([]int, len(validators))}
			for gi, g := range groups {
				for vi, v := range validators {
					for ti, passed := range v.run(g, draft, filepath.Join(dir, "remotes")) {
						row.total[vi]++
						if passed {
							row.pass[vi]++
						} else if vi == 0 {
							id := fmt.Sprintf("%s#%d.%d", rel, gi, ti)
							failed = append(failed, id)
							descr[id] = oneLine(g.Description + " / " + g.Tests[ti].Description)
						}
					}
				}
			}
			rows = append(rows, row)
		}
	}
	table := formatTable(rows)
	t.Logf("passes per keyword:\n%s", table)

	if *update {
		if err := os.WriteFile(suiteTable, []byte(table), 0o644); err != nil {
			t.Fatal(err)
		}
		writeKnown(t, failed, descr)
		return
	}
	known := readKnown(t)
	var regressed, fixed []string
	for _, id := range failed {
		if !known[id] {
			regressed = append(regressed, id+"  "+descr[id])
		}
		delete(known, id)
	}
	for id := range known {
		fixed = append(fixed, id)
	}
	slices.Sort(fixed)
	if len(regressed) > 0 {
		t.Errorf("%d cases of the JSON Schema Test Suite fail that are not in %s:\n%s",
			len(regressed), knownFailures, strings.Join(regressed, "\n"))
	}
	if len(fixed) > 0 {
		t.Errorf("%d cases in %s pass now; remove them from the file (go test ./internal/schema -run TestSuite -update):\n%s",
			len(fixed), knownFailures, strings.Join(fixed, "\n"))
	}
}

// formatTable lists the passes per keyword of each validator, then the
// totals per draft, required and optional apart.
func formatTable(rows []tally) string {
	var b strings.Builder
	b.WriteString("# Passes of the JSON Schema Test Suite per keyword (file), written by\n")
	b.WriteString("# go test ./internal/schema -run TestSuite -update. Columns:\n")
	for i, v := range validators {
		fmt.Fprintf(&b, "#   %d: %s\n", i+1, v.name)
	}
	sums := map[string]*tally{}
	var order []string
	for _, r := range rows {
		fmt.Fprintf(&b, "%-52s", r.keyword)
		for i := range validators {
			fmt.Fprintf(&b, " %5d/%-5d", r.pass[i], r.total[i])
		}
		b.WriteString("\n")
		draft, _, _ := strings.Cut(r.keyword, "/")
		part := draft + " required"
		if strings.Contains(r.keyword, "/optional/") {
			part = draft + " optional"
		}
		s, ok := sums[part]
		if !ok {
			s = &tally{keyword: part, pass: make([]int, len(validators)), total: make([]int, len(validators))}
			sums[part] = s
			order = append(order, part)
		}
		for i := range validators {
			s.pass[i] += r.pass[i]
			s.total[i] += r.total[i]
		}
	}
	for _, part := range order {
		s := sums[part]
		fmt.Fprintf(&b, "%-52s", "total "+part)
		for i := range validators {
			fmt.Fprintf(&b, " %5d/%-5d", s.pass[i], s.total[i])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// readKnown reads the case names in the known-failures file: the first
// field of each line that is not blank or a # comment.
func readKnown(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(knownFailures)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	known := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		known[strings.Fields(line)[0]] = true
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return known
}

func writeKnown(t *testing.T, failed []string, descr map[string]string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(`# Cases of the JSON Schema Test Suite (../shared/jsonschema-test-suite, see
# its PROVENANCE.md) that ask's validator, github.com/google/jsonschema-go
# as internal/schema sets it up, fails. TestSuite fails on a failure not
# listed here and on a listed case that passes. Written by:
# go test ./internal/schema -run TestSuite -update
#
# A case is <draft>/<file>#<group>.<test>, then "group / test".
`)
	for _, id := range failed {
		fmt.Fprintf(&b, "%s  %s\n", id, descr[id])
	}
	if err := os.WriteFile(knownFailures, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s: %d cases", knownFailures, len(failed))
}
