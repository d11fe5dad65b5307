package main

import (
	"go/parser"
	"go/token"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// designLibraries are the modules DESIGN §1 names as the libraries ask is
// built on: the stack the floor's -tags stack build links.
var designLibraries = []string{
	"github.com/urfave/cli/v2",
	"github.com/tidwall/gjson",
	"github.com/tidwall/sjson",
	"github.com/mattn/go-isatty",
	"github.com/modelcontextprotocol/go-sdk",
	"github.com/google/jsonschema-go",
	"mvdan.cc/sh/v3",
	"github.com/landlock-lsm/go-landlock",
	"github.com/elastic/go-seccomp-bpf",
	"github.com/go-git/go-git/v5",
	"go.opentelemetry.io/otel",
}

// The floor on ask's stack is measured as "what of ask's start is the
// stack's": it must link every package of those libraries that ask's
// binary imports, or ask's ratio to it counts a library's package inits
// and size as ask's own.
func TestStackLinksAsksLibraries(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed")
	}
	out, err := exec.Command(goBin, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/ask-cli/ask/cmd/ask").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var asks []string
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) == 0 || !strings.HasPrefix(fields[0], "github.com/ask-cli/ask/") {
			continue
		}
		for _, imp := range fields[1:] {
			if fromDesign(imp) && !slices.Contains(asks, imp) {
				asks = append(asks, imp)
			}
		}
	}
	if len(asks) < 5 {
		t.Fatalf("ask imports %q of DESIGN §1's libraries: too few, go list found too little", asks)
	}
	f, err := parser.ParseFile(token.NewFileSet(), "stack.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	var floor []string
	for _, spec := range f.Imports {
		p, _ := strconv.Unquote(spec.Path.Value)
		floor = append(floor, p)
	}
	for _, imp := range asks {
		if !slices.Contains(floor, imp) {
			t.Errorf("ask imports %s, which stack.go does not link", imp)
		}
	}
}

// fromDesign reports whether the package path is in one of
// designLibraries.
func fromDesign(path string) bool {
	for _, m := range designLibraries {
		if path == m || strings.HasPrefix(path, m+"/") {
			return true
		}
	}
	return false
}
