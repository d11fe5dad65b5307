package textproto

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// testTools are ask's built-in tools as they are declared (a copy of their
// schemas; cmd/ask checks that the copy is current) and two user tools.
func testTools(t testing.TB) []providers.Tool {
	t.Helper()
	tools, err := providers.ParseTools(providertest.Read(t, "tools.json"))
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// goldenParse is a Result as the golden files show it: arguments as JSON
// values, so that they read easily.
type goldenParse struct {
	Calls     []goldenCall `json:"calls"`
	Text      string       `json:"text"`
	Terminate bool         `json:"terminate"`
	Problems  []Problem    `json:"problems"`
}

type goldenCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// TestCorpus parses every recorded-style reply in testdata/corpus and
// compares the result with testdata/golden/NAME.json (go test -update
// rewrites them).
func TestCorpus(t *testing.T) {
	tools := testTools(t)
	files, err := filepath.Glob(filepath.Join("testdata", "corpus", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".txt")
		t.Run(name, func(t *testing.T) {
			reply, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			res := Parse(string(reply), tools)
			checkInvariants(t, res, tools)
			g := goldenParse{Calls: []goldenCall{}, Text: res.Text, Terminate: res.Terminate, Problems: res.Problems}
			if g.Problems == nil {
				g.Problems = []Problem{}
			}
			for _, c := range res.Calls {
				g.Calls = append(g.Calls, goldenCall{ID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
			}
			providertest.Golden(t, name, providertest.Marshal(t, g))
		})
	}
}

// checkInvariants holds for every reply: each call names a declared tool
// with a JSON object for arguments and has a unique id.
func checkInvariants(t testing.TB, res Result, tools []providers.Tool) {
	t.Helper()
	declared := map[string]bool{}
	for _, tl := range tools {
		declared[tl.Name] = true
	}
	ids := map[string]bool{}
	for _, c := range res.Calls {
		if !declared[c.Name] {
			t.Errorf("call names undeclared tool %q", c.Name)
		}
		if !gjson.Valid(c.Arguments) || !gjson.Parse(c.Arguments).IsObject() {
			t.Errorf("call %s: arguments are not a JSON object: %q", c.Name, c.Arguments)
		}
		if c.ID == "" || ids[c.ID] {
			t.Errorf("call %s: id %q is empty or repeated", c.Name, c.ID)
		}
		ids[c.ID] = true
	}
	for _, p := range res.Problems {
		if p.Message == "" {
			t.Error("a problem without a message")
		}
	}
}
