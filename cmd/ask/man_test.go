package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers/catalog"
)

// manText is man/ask.1 with roff's font changes and escapes undone, so
// that "\fB\-\-json\fR" reads "--json" and "\e" reads "\".
func manText(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../man/ask.1")
	if err != nil {
		t.Fatal(err)
	}
	s := regexp.MustCompile(`\\f[BIRP]|\\f\(..|\\&`).ReplaceAllString(string(b), "")
	return strings.NewReplacer(`\-`, "-", `\(em`, "—", `\(aq`, "'", `\e`, `\`).Replace(s)
}

// mentions reports whether text holds word as a word of its own (not part
// of a longer flag or name).
func mentions(text, word string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_-])` + regexp.QuoteMeta(word) + `($|[^A-Za-z0-9_-])`)
	return re.MatchString(text)
}

// manSection is the text of the section .SH name, up to the next .SH; ""
// when the page has no such section.
func manSection(page, name string) string {
	loc := regexp.MustCompile(`(?m)^\.SH "?` + regexp.QuoteMeta(name) + `"?\n`).FindStringIndex(page)
	if loc == nil {
		return ""
	}
	rest := page[loc[1]:]
	if i := strings.Index(rest, "\n.SH "); i >= 0 {
		rest = rest[:i+1]
	}
	return rest
}

// manEntries returns the .TP items whose tag starts with the command path
// (as "ask provider send", followed by a space or nothing), each from its
// tag to the next .TP, .PP, .SS or .SH. A command's entries are where its
// flags are documented.
func manEntries(page, path string) []string {
	var entries []string
	lines := strings.Split(page, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if lines[i] != ".TP" {
			continue
		}
		tag := strings.TrimSpace(lines[i+1])
		if tag != path && !strings.HasPrefix(tag, path+" ") {
			continue
		}
		end := i + 1
		for end+1 < len(lines) && !isBreak(lines[end+1]) {
			end++
		}
		entries = append(entries, strings.Join(lines[i+1:end+1], "\n"))
	}
	return entries
}

// isBreak reports whether a roff line ends an indented paragraph.
func isBreak(line string) bool {
	for _, m := range []string{".TP", ".PP", ".SS ", ".SH "} {
		if line == strings.TrimSpace(m) || strings.HasPrefix(line, m) {
			return true
		}
	}
	return false
}

// flagNames spells a flag's names as on a command line: -p, --provider.
func flagNames(f cli.Flag) []string {
	var out []string
	for _, n := range f.Names() {
		if len(n) == 1 {
			out = append(out, "-"+n)
		} else {
			out = append(out, "--"+n)
		}
	}
	return out
}

// TestManPageDocumentsEveryCommandAndFlag walks the app's commands and
// flags. Every command has an entry in man/ask.1 and a line in SYNOPSIS;
// the main command's flags are in OPTIONS; a subcommand's flags are in its
// own entries or those of the command it belongs to (`ask tools` for `ask
// tools run`), all names of each; the main command's flags a subcommand
// reads (runFlagsRead) are named in its entries too.
func TestManPageDocumentsEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	page := manText(t)
	options := manSection(page, "OPTIONS")
	if options == "" {
		t.Fatal("no OPTIONS section")
	}
	app := newApp(&IO{Getenv: func(string) string { return "" }})
	mainFlags := map[string]bool{}
	for _, f := range app.Flags {
		for _, n := range flagNames(f) {
			mainFlags[n] = true
			if !mentions(options, n) {
				t.Errorf("OPTIONS does not document %s", n)
			}
		}
	}

	var walk func(path string, inherited []string, cmds []*cli.Command)
	walk = func(path string, inherited []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" {
				continue
			}
			full := path + " " + c.Name
			var own []string
			for _, e := range manEntries(page, full) {
				// An entry of a subcommand is not one of this command.
				next, _, _ := strings.Cut(strings.TrimPrefix(e, full+" "), " ")
				if !slices.ContainsFunc(c.Subcommands, func(s *cli.Command) bool { return s.HasName(next) }) {
					own = append(own, e)
				}
			}
			if len(own) == 0 {
				t.Errorf("man/ask.1 has no entry (a .TP item tagged %q) for the command", full)
			}
			docs := strings.Join(append(slices.Clone(inherited), own...), "\n")
			for _, n := range runFlagsRead[full] {
				if !mentions(docs, "--"+n) {
					t.Errorf("man/ask.1 does not say that %s reads --%s", full, n)
				}
			}
			if synopsis := manSection(page, "SYNOPSIS"); path == "ask" && !mentions(synopsis, c.Name) {
				t.Errorf("SYNOPSIS does not list ask %s", c.Name)
			}
			for _, f := range c.Flags {
				if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
					for _, n := range flagNames(f) {
						if !mainFlags[n] {
							t.Errorf("%s has the hidden flag %s, which the main command does not have", full, n)
						}
					}
					continue
				}
				for _, n := range flagNames(f) {
					if !mentions(docs, n) {
						t.Errorf("man/ask.1 does not document %s in the entry of %s", n, full)
					}
				}
			}
			walk(full, append(slices.Clone(inherited), own...), c.Subcommands)
		}
	}
	walk("ask", nil, app.Commands)
}

// binarySources lists the non-test Go files of the ask binary: those of
// cmd/ask and of every package of this module it imports, directly or not.
// Test helpers (internal/fakeprovider, providertest) are left out unless
// the binary uses them.
func binarySources(t *testing.T) []string {
	t.Helper()
	const module = "github.com/ask-cli/ask/"
	var files []string
	seen := map[string]bool{".": true}
	queue := []string{"."}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			path := filepath.Join(dir, name)
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, path)
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				if err != nil || !strings.HasPrefix(p, module) {
					continue
				}
				if d := filepath.Join("../..", strings.TrimPrefix(p, module)); !seen[d] {
					seen[d] = true
					queue = append(queue, d)
				}
			}
		}
	}
	return files
}

// envReads finds the environment variables the binary reads by name: the
// string literals passed to Getenv or LookupEnv (of os, of an IO, or a
// getenv parameter) in its sources.
func envReads(t *testing.T) []string {
	t.Helper()
	re := regexp.MustCompile(`(?:Getenv|getenv|LookupEnv)\("([A-Za-z_][A-Za-z0-9_]*)"\)`)
	seen := map[string]bool{}
	for _, path := range binarySources(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			seen[m[1]] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// TestManPageDocumentsEveryEnvironmentVariable fails for each variable the
// code reads, or the provider catalog names, that ENVIRONMENT does not
// document.
func TestManPageDocumentsEveryEnvironmentVariable(t *testing.T) {
	t.Parallel()
	env := manSection(manText(t), "ENVIRONMENT")
	if env == "" {
		t.Fatal("no ENVIRONMENT section")
	}
	vars := envReads(t)
	// The scan must see reads made each way: os.Getenv in main.go and a
	// getenv parameter in the catalog.
	for _, v := range []string{"ASK_FORCE_TTY", "ASK_PROVIDER"} {
		if !slices.Contains(vars, v) {
			t.Errorf("the scan of the sources missed %s: %v", v, vars)
		}
	}
	for _, p := range catalog.All() {
		vars = append(append(vars, p.KeyEnv...), p.BaseURLEnv...)
	}
	for _, v := range vars {
		if !mentions(env, v) {
			t.Errorf("ENVIRONMENT does not document %s", v)
		}
	}
}

// TestManPageSections checks the page's skeleton: the sections a man page
// needs and every exit code of DESIGN §7.
func TestManPageSections(t *testing.T) {
	t.Parallel()
	page := manText(t)
	for _, section := range []string{"NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "ENVIRONMENT", "FILES", "EXIT STATUS", "EXAMPLES", "SEE ALSO"} {
		if manSection(page, section) == "" {
			t.Errorf("no %s section", section)
		}
	}
	status := manSection(page, "EXIT STATUS")
	for _, code := range exitCodes {
		if !regexp.MustCompile(`(?m)^` + code + `$`).MatchString(status) {
			t.Errorf("exit status %s is not documented", code)
		}
	}
}

// exitCodes are the exit codes of DESIGN §7.
var exitCodes = []string{"0", "1", "2", "3", "4", "5", "6", "124", "130"}

// joinContinued joins shell lines continued with a backslash, so that a
// pipeline split over lines reads as it does on one.
func joinContinued(s string) string {
	return regexp.MustCompile(`[ \t]*\\\n[ \t]*`).ReplaceAllString(s, " ")
}

// scriptPipeline is the command that testdata/script/pipeline.txtar runs
// with `exec sh -c '...'`: the documented step by hand.
func scriptPipeline(t *testing.T) string {
	t.Helper()
	a, err := txtar.ParseFile("testdata/script/pipeline.txtar")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^exec sh -c '([^']+)'$`).FindAllStringSubmatch(string(a.Comment), -1)
	if len(m) != 1 {
		t.Fatalf("pipeline.txtar has %d lines `exec sh -c '...'`, want 1", len(m))
	}
	return m[0][1]
}

// TestPipelineDocumented requires the pipeline that pipeline.txtar runs
// against a fake provider to appear, as it is, in the README and in the
// man page's EXAMPLES, so that the documented step is the tested one.
func TestPipelineDocumented(t *testing.T) {
	t.Parallel()
	pipeline := scriptPipeline(t)
	if !strings.Contains(pipeline, "| ask tools run |") {
		t.Fatalf("pipeline.txtar's command is not the step by hand: %s", pipeline)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"README.md":          string(readme),
		"man/ask.1 EXAMPLES": manSection(manText(t), "EXAMPLES"),
	}
	for name, text := range docs {
		if !strings.Contains(joinContinued(text), pipeline) {
			t.Errorf("%s does not show the pipeline of testdata/script/pipeline.txtar:\n%s", name, pipeline)
		}
	}
}

// TestReadmeExitCodes checks that the README's list of exit codes names
// every code of DESIGN §7.
func TestReadmeExitCodes(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(readme), "Exit codes:")
	if !ok {
		t.Fatal("README.md has no \"Exit codes:\" paragraph")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	for _, code := range exitCodes {
		if !regexp.MustCompile(`(^|[\s,])` + code + ` `).MatchString(list) {
			t.Errorf("README.md's exit codes do not include %s", code)
		}
	}
}

// TestManPageListsRunStatuses checks that the man page names every status a
// run can end with (the loop's Status constants), as DESIGN §6 lists them.
func TestManPageListsRunStatuses(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "../../internal/loop/loop.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	man := manText(t)
	var n int
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, name := range v.Names {
				if !strings.HasPrefix(name.Name, "Status") || i >= len(v.Values) {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok {
					continue
				}
				status, _ := strconv.Unquote(lit.Value)
				n++
				if !mentions(man, status) {
					t.Errorf("man/ask.1 does not name the run status %q (loop.%s)", status, name.Name)
				}
			}
		}
	}
	if n < 9 {
		t.Errorf("found %d run statuses in internal/loop/loop.go; the parse missed some", n)
	}
}

// TestLoopScriptDocumented requires loop.sh, which pipeline_loop.txtar runs
// against a fake provider until the final answer, to appear line for line
// in the man page's EXAMPLES.
func TestLoopScriptDocumented(t *testing.T) {
	t.Parallel()
	a, err := txtar.ParseFile("testdata/script/pipeline_loop.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var script string
	for _, f := range a.Files {
		if f.Name == "loop.sh" {
			script = string(f.Data)
		}
	}
	if !strings.Contains(script, "ask provider append") {
		t.Fatalf("pipeline_loop.txtar's loop.sh does not append: %q", script)
	}
	examples := manSection(manText(t), "EXAMPLES")
	if !strings.Contains(examples, script) {
		t.Errorf("man/ask.1 EXAMPLES does not show loop.sh of testdata/script/pipeline_loop.txtar:\n%s", script)
	}
}
