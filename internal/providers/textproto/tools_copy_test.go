package textproto_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

// The text protocol's markdown mappings are written for the built-in
// tools' schemas, kept as a copy in textproto's testdata: the copy must be
// what the tools declare.
func TestTextprotoToolsCopyIsCurrent(t *testing.T) {
	t.Parallel()
	root, err := tools.NewRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(tools.Builtins(root)...)
	if err != nil {
		t.Fatal(err)
	}
	var declared []providers.Tool
	for _, t := range reg.List() {
		info := t.Info()
		declared = append(declared, providers.Tool{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
	}
	want, err := providers.MarshalTools(declared)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/tools.json")
	if err != nil {
		t.Fatal(err)
	}
	copied, err := providers.ParseTools(b)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := providers.MarshalTools(copied[:len(tools.Builtins(root))])
	var g, w any
	json.Unmarshal(got, &g)
	json.Unmarshal(want, &w)
	if gs, ws := mustJSON(g), mustJSON(w); gs != ws {
		t.Errorf("internal/providers/textproto/testdata/tools.json is out of date:\n got %s\nwant %s", gs, ws)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
