// Command fuzzcorpus writes the committed seed corpora of the protocol fuzz
// targets: each recorded fixture, cut and split at pseudo-random (but
// reproducible) points, as testdata/fuzz/FuzzXxx/fixture-* files that
// `go test` runs as seeds and `go test -fuzz` starts from. Run it from the
// repository root after adding fixtures or changing a target's arguments:
//
//	go run ./scripts/fuzzcorpus
//
// Files it did not write (inputs the fuzzer found) are left alone.
package main

import (
	"fmt"
	"hash/fnv"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// target is one fuzz function: where it lives, which fixtures seed it, and
// how one fixture becomes the function's arguments.
type target struct {
	pkg      string
	name     string
	fixtures []string // globs, relative to the repository root
	per      int      // corpus entries per fixture
	args     func(body []byte, r *rand.Rand) []any
}

const p = "internal/providers/"

var (
	sseFixtures  = []string{p + "openai/testdata/*/*.sse", p + "anthropic/testdata/*.sse", p + "responses/testdata/*.sse"}
	jsonFixtures = func(pkg string) []string { return []string{p + pkg + "/testdata/*.json"} }
)

// cut is a point inside body, the length at most.
func cut(body []byte, r *rand.Rand) int { return r.IntN(len(body) + 1) }

var targets = []target{
	{"internal/providers", "FuzzReadSSE", sseFixtures, 1, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r)), uint8(r.IntN(16))}
	}},
	{"internal/providers", "FuzzReadNDJSON", []string{p + "ollama/testdata/*.ndjson"}, 3, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r)), uint8(r.IntN(16))}
	}},
	{p + "openai", "FuzzParse", []string{p + "openai/testdata/*/*.sse", p + "openai/testdata/*/*.json"}, 2, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r)), uint8(r.IntN(61))}
	}},
	{p + "anthropic", "FuzzStream", []string{p + "anthropic/testdata/*.sse"}, 3, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r))}
	}},
	{p + "anthropic", "FuzzParseResponse", jsonFixtures("anthropic"), 2, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r))}
	}},
	{p + "anthropic", "FuzzParseToolCalls", []string{p + "anthropic/testdata/*.sse", p + "anthropic/testdata/*.json"}, 2, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r))}
	}},
	{p + "ollama", "FuzzStream", []string{p + "ollama/testdata/*.ndjson", p + "ollama/testdata/*.json"}, 3, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint16(cut(b, r)), uint16(cut(b, r)), uint8(r.IntN(256))}
	}},
	{p + "ollama", "FuzzParseResponse", []string{p + "ollama/testdata/*.ndjson", p + "ollama/testdata/*.json"}, 2, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint16(cut(b, r))}
	}},
	{p + "responses", "FuzzStream", []string{p + "responses/testdata/*.sse"}, 3, func(b []byte, r *rand.Rand) []any {
		return []any{b, uint32(cut(b, r)), uint8(r.IntN(256))}
	}},
	{p + "responses", "FuzzParseResponse", jsonFixtures("responses"), 2, func(b []byte, r *rand.Rand) []any {
		return []any{b[:cut(b, r)]}
	}},
}

func main() {
	for _, t := range targets {
		n, err := write(t)
		if err != nil {
			log.Fatalf("%s %s: %v", t.pkg, t.name, err)
		}
		fmt.Printf("%s/testdata/fuzz/%s: %d seeds\n", t.pkg, t.name, n)
	}
}

func write(t target) (int, error) {
	dir := filepath.Join(t.pkg, "testdata", "fuzz", t.name)
	old, _ := filepath.Glob(filepath.Join(dir, "fixture-*"))
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return 0, err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	var files []string
	for _, g := range t.fixtures {
		m, err := filepath.Glob(g)
		if err != nil {
			return 0, err
		}
		for _, f := range m {
			if !strings.HasSuffix(f, ".request.json") {
				files = append(files, f)
			}
		}
	}
	sort.Strings(files)
	if len(files) == 0 {
		return 0, fmt.Errorf("no fixtures match %v", t.fixtures)
	}
	n := 0
	for _, f := range files {
		body, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		r := rand.New(rand.NewPCG(seed(t.name, f), 1))
		for i := range t.per {
			name := fmt.Sprintf("fixture-%s-%d", entryName(f), i)
			if err := os.WriteFile(filepath.Join(dir, name), encode(t.args(body, r)), 0o644); err != nil {
				return 0, err
			}
			n++
		}
	}
	return n, nil
}

// entryName names a seed after its fixture: anthropic-x-stream-sse for
// internal/providers/anthropic/testdata/x-stream.sse.
func entryName(fixture string) string {
	rel := strings.Replace(strings.TrimPrefix(fixture, p), "/testdata/", "/", 1)
	return strings.NewReplacer("/", "-", ".", "-").Replace(rel)
}

// seed makes each target's cuts of each fixture reproducible.
func seed(parts ...string) uint64 {
	h := fnv.New64a()
	for _, s := range parts {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// encode writes arguments in the "go test fuzz v1" format.
func encode(args []any) []byte {
	var b strings.Builder
	b.WriteString("go test fuzz v1\n")
	for _, a := range args {
		switch v := a.(type) {
		case []byte:
			fmt.Fprintf(&b, "[]byte(%q)\n", v)
		case uint32:
			fmt.Fprintf(&b, "uint32(%d)\n", v)
		case uint16:
			fmt.Fprintf(&b, "uint16(%d)\n", v)
		case uint8:
			fmt.Fprintf(&b, "byte(%d)\n", v)
		default:
			panic(fmt.Sprintf("no encoding for %T", a))
		}
	}
	return []byte(b.String())
}
