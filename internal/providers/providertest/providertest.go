// Package providertest holds what the protocol packages' tests share: fixture
// loading, semantic JSON comparison and golden files with an -update flag.
package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/golden")

// Read returns testdata/NAME, failing the test if it cannot be read.
func Read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// SameJSON fails the test unless got and want are the same JSON value,
// whatever their key order and spacing.
func SameJSON(t testing.TB, what string, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: got invalid JSON: %v\n%s", what, err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: want invalid JSON: %v\n%s", what, err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s differs\n got: %s\nwant: %s", what, Indent(got), Indent(want))
	}
}

// Golden compares got, as JSON, with testdata/golden/NAME.json, or rewrites
// that file when the test runs with -update.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	pretty := append(Indent(got), '\n')
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	SameJSON(t, name, got, want)
}

// Indent pretty-prints JSON for messages and golden files; invalid JSON is
// returned as it is.
func Indent(b []byte) []byte {
	var out bytes.Buffer
	if err := json.Indent(&out, bytes.TrimSpace(b), "", "  "); err != nil {
		return b
	}
	return out.Bytes()
}

// Marshal is json.Marshal without HTML escaping, failing the test on error.
func Marshal(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(buf.Bytes())
}

// Fixtures lists the files in testdata whose names end in suffix.
func Fixtures(t testing.TB, suffix string) []string {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), suffix) {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatalf("no testdata/*%s fixtures", suffix)
	}
	return names
}

// Turn is what a golden file records of one parsed reply.
type Turn struct {
	Text       string               `json:"text"`
	Reasoning  string               `json:"reasoning,omitempty"`
	Calls      []providers.ToolCall `json:"calls"`
	Usage      providers.Usage      `json:"usage"`
	StopReason string               `json:"stop_reason"`
	Messages   []json.RawMessage    `json:"messages"`
}

// RecordTurn is the golden record of turn; no calls are recorded as [].
func RecordTurn(turn *providers.Turn) Turn {
	calls := turn.Calls
	if calls == nil {
		calls = []providers.ToolCall{}
	}
	return Turn{turn.Text, turn.Reasoning, calls, turn.Usage, turn.StopReason, turn.Messages}
}

// SameBytes fails the test unless got and want are the same bytes.
func SameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs byte for byte\n got: %s\nwant: %s", what, got, want)
	}
}

// Stem is a fixture's name without its .sse or .json.
func Stem(name string) string {
	return strings.TrimSuffix(strings.TrimSuffix(name, ".sse"), ".json")
}

// Replies lists the recorded responses in testdata: the streams (*.sse)
// and the bodies (*.json but *.request.json), the latter split by isError
// into replies and error bodies.
func Replies(t testing.TB, isError func(body []byte) bool) (replies, errorBodies []string) {
	t.Helper()
	replies = Fixtures(t, ".sse")
	for _, name := range Fixtures(t, ".json") {
		switch {
		case strings.HasSuffix(name, ".request.json"):
		case isError(Read(t, name)):
			errorBodies = append(errorBodies, name)
		default:
			replies = append(replies, name)
		}
	}
	return replies, errorBodies
}

// CallsOrEmpty is calls, or an empty list for none: goldens record [].
func CallsOrEmpty(calls []providers.ToolCall) []providers.ToolCall {
	if calls == nil {
		return []providers.ToolCall{}
	}
	return calls
}

// Outcome checks what every reading of a reply must come to, whatever the
// bytes: a turn, or an error of a kind the loop reports (malformed, cut
// short, or the provider's own), never both or neither. It reports
// whether there is a turn to check further.
func Outcome(t testing.TB, what string, turn *providers.Turn, err error) bool {
	t.Helper()
	if err != nil {
		var apiErr *providers.APIError
		if turn != nil {
			t.Errorf("%s: turn and error both returned", what)
		}
		if !errors.Is(err, providers.ErrMalformed) && !errors.Is(err, providers.ErrStreamCut) && !errors.As(err, &apiErr) {
			t.Errorf("%s: unexpected kind of error: %v", what, err)
		}
		return false
	}
	if turn == nil {
		t.Fatalf("%s: no turn and no error", what)
	}
	return true
}
