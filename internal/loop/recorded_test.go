package loop_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/tools"
)

var record = flag.Bool("record", false, "record testdata/longruns anew (ask's own tools on a copy of this repository)")

// The project's own long runs, recorded: a coding agent's session on a
// copy of this repository, the model's turns scripted in the shape of
// SWE-agent's and mini-swe-agent's (look around, read, search, vet, edit)
// and every output what ask's own tools gave. The lengths are those of the
// recorded runs of other agents issue 41 measured: a median run and the
// longest ones.
var recordedRuns = []struct {
	name  string
	steps int
}{{"session-37", 37}, {"session-102", 102}, {"session-188", 188}}

// recordedStep is one step of a recorded run, a line of its file.
type recordedStep struct {
	Text  string         `json:"text,omitempty"`
	Calls []recordedCall `json:"calls,omitempty"`
}

type recordedCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Output    string `json:"output"`
	IsError   bool   `json:"is_error,omitempty"`
}

// Recorded runs under an 8,000-token window (a small local model's), in
// every protocol: with --compact off the longer ones end at the window
// with the protocol's own error; with compaction each runs to its answer,
// every call made, no request over the window when ask knows it, and the
// provider's refusal compacted and retried when it does not.
func TestRecordedRunsFitAWindow(t *testing.T) {
	t.Parallel()
	if *record {
		recordRuns(t)
	}
	for i, rr := range recordedRuns {
		run := loadRecordedRun(t, rr.name)
		if len(run.replies) != rr.steps+1 {
			t.Fatalf("%s: %d steps, want %d", rr.name, len(run.replies)-1, rr.steps)
		}
		for _, protocol := range fakeprovider.Protocols {
			for _, known := range []bool{true, false} {
				name := fmt.Sprintf("%s/%s/window known %v", rr.name, protocol, known)
				t.Run(name, func(t *testing.T) {
					if testing.Short() && (i > 0 || protocol != "openai" || !known) {
						t.Skip("the shortest run, in one protocol, under -short")
					}
					t.Parallel()
					window := 0
					if known {
						window = testWindow
					}
					cfg := loop.Config{Window: window, Tools: builtinDeclarations(t)}
					off := cfg
					off.NoCompact = true
					dead := runWindowed(t, protocol, testWindow, run, off)
					if rr.steps > 40 {
						if dead.res.Status != loop.StatusError || !errors.Is(dead.res.Err, loop.ErrContextWindow) {
							t.Fatalf("--compact off: status %s after %d steps (%v), want the window's error", dead.res.Status, dead.res.Steps, dead.res.Err)
						}
					}
					on := runWindowed(t, protocol, testWindow, run, cfg)
					if on.res.Status != loop.StatusCompleted || on.res.Answer != run.replies[len(run.replies)-1].Text {
						t.Fatalf("status %s after %d of %d steps (%v)", on.res.Status, on.res.Steps, rr.steps, on.res.Err)
					}
					calls := 0
					for _, r := range run.replies {
						calls += len(r.Calls)
					}
					if len(on.res.Calls) != calls {
						t.Errorf("%d calls ran, want %d", len(on.res.Calls), calls)
					}
					bill := on.model.Bill()
					if known && bill.Refused != 0 {
						t.Errorf("the window known, %d requests crossed it", bill.Refused)
					}
					if rr.steps > 40 && len(on.res.Compactions) == 0 {
						t.Error("no compaction")
					}
					for _, c := range on.res.Compactions {
						if c.AfterTokens >= c.BeforeTokens || c.AfterTokens > testWindow {
							t.Errorf("compaction %+v", c)
						}
					}
				})
			}
		}
	}
}

// builtinDeclarations are the built-in tools as a run offers them.
func builtinDeclarations(t testing.TB) []providers.Tool {
	var out []providers.Tool
	for _, tool := range tools.Builtins(nil) {
		info := tool.Info()
		out = append(out, providers.Tool{Name: info.Name, Description: info.Description, Parameters: info.Parameters})
	}
	return out
}

func loadRecordedRun(t testing.TB, name string) agentRun {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "longruns", name+".jsonl.gz"))
	if err != nil {
		t.Fatalf("%v (go test -run TestRecordedRunsFitAWindow -record records it)", err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	run := agentRun{outputs: map[string]string{}, failed: map[string]bool{}}
	sc := bufio.NewScanner(z)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var st recordedStep
		if err := json.Unmarshal(sc.Bytes(), &st); err != nil {
			t.Fatalf("%s line %d: %v", name, len(run.replies)+1, err)
		}
		reply := fakeprovider.Reply{Text: st.Text}
		for _, c := range st.Calls {
			if _, dup := run.outputs[c.Arguments]; dup {
				t.Fatalf("%s: the arguments %s stand twice: a recorded call must be told by them", name, c.Arguments)
			}
			run.outputs[c.Arguments] = c.Output
			run.failed[c.Arguments] = c.IsError
			reply.Calls = append(reply.Calls, fakeprovider.Call(c.ID, c.Name, c.Arguments))
		}
		run.replies = append(run.replies, reply)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return run
}

// recordRuns records recordedRuns with ask's own tools on a copy of this
// repository at HEAD.
func recordRuns(t *testing.T) {
	for i, rr := range recordedRuns {
		dir := t.TempDir()
		archive := exec.Command("sh", "-c", `git -C ../.. archive HEAD | tar -x -C "$0"`, dir)
		if out, err := archive.CombinedOutput(); err != nil {
			t.Fatalf("copy the repository: %v: %s", err, out)
		}
		root, err := tools.NewRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		reg, err := tools.NewRegistry(tools.Builtins(root)...)
		if err != nil {
			t.Fatal(err)
		}
		s := newSession(dir, uint64(i+1))
		var buf bytes.Buffer
		z := gzip.NewWriter(&buf)
		enc := json.NewEncoder(z)
		enc.SetEscapeHTML(false)
		id := 0
		for step := range rr.steps {
			var st recordedStep
			if step%4 == 0 {
				st.Text = s.thought(step)
			}
			for range 1 + s.rng.IntN(10)/8 { // a second call one step in five
				name, args := s.next()
				id++
				out, failed := reg.Call(context.Background(), name, args)
				st.Calls = append(st.Calls, recordedCall{ID: fmt.Sprintf("call_%d", id), Name: name, Arguments: args, Output: out, IsError: failed})
			}
			if err := enc.Encode(st); err != nil {
				t.Fatal(err)
			}
		}
		enc.Encode(recordedStep{Text: "The discount is now applied as a percentage in every path I found, and go vet is clean."})
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "longruns", rr.name+".jsonl.gz"), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("recorded testdata/longruns: run the tests again without -record")
}

// session scripts a coding agent's turns over a repository: each call's
// arguments new, so that a recorded call is told by them.
type session struct {
	dir   string
	rng   *rand.Rand
	files []string // the repository's Go files, from its top
	pkgs  []string
	used  map[string]bool
}

func newSession(dir string, seed uint64) *session {
	s := &session{dir: dir, rng: rand.New(rand.NewPCG(seed, 41)), used: map[string]bool{}}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") {
			rel, _ := filepath.Rel(dir, p)
			s.files = append(s.files, rel)
		}
		return nil
	})
	slices.Sort(s.files)
	for _, f := range s.files {
		if pkg := filepath.Dir(f); strings.HasPrefix(pkg, "internal/") && !slices.Contains(s.pkgs, pkg) {
			s.pkgs = append(s.pkgs, pkg)
		}
	}
	return s
}

var funcName = regexp.MustCompile(`(?m)^func (?:\([^)]*\) )?([A-Za-z]\w{3,})\(`)

// ident is a function named in a random file.
func (s *session) ident() string {
	for {
		b, _ := os.ReadFile(filepath.Join(s.dir, s.file()))
		if m := funcName.FindAllSubmatch(b, -1); len(m) > 0 {
			return string(m[s.rng.IntN(len(m))][1])
		}
	}
}

func (s *session) file() string { return s.files[s.rng.IntN(len(s.files))] }
func (s *session) pkg() string  { return s.pkgs[s.rng.IntN(len(s.pkgs))] }

func (s *session) thought(step int) string {
	return fmt.Sprintf("Step %d: I have looked at %s; next I check how %s is used.", step+1, s.file(), s.ident())
}

// next is the next call: a tool's name and its arguments.
func (s *session) next() (string, string) {
	for {
		name, args := s.pick()
		if !s.used[args] {
			s.used[args] = true
			return name, args
		}
	}
}

func (s *session) pick() (string, string) {
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	sh := func(cmd string) (string, string) { return "shell", q(map[string]string{"command": cmd}) }
	switch k := s.rng.IntN(20); {
	case k < 6:
		return "read_file", q(map[string]any{"path": s.file(), "offset": 1 + 20*s.rng.IntN(10), "limit": 30 + s.rng.IntN(90)})
	case k < 9:
		from := 1 + s.rng.IntN(150)
		return sh(fmt.Sprintf("sed -n '%d,%dp' %s", from, from+20+s.rng.IntN(60), s.file()))
	case k < 12:
		return "search", q(map[string]any{"pattern": s.ident(), "glob": "*.go"})
	case k < 14:
		return sh(fmt.Sprintf("grep -rn '%s' --include='*.go' . | head -n %d", s.ident(), 10+s.rng.IntN(30)))
	case k < 15:
		return "list_directory", q(map[string]string{"path": s.pkg()})
	case k < 16:
		return sh(fmt.Sprintf("wc -l %s/*.go | sort -n | tail -n %d", s.pkg(), 3+s.rng.IntN(8)))
	case k < 18:
		return sh(fmt.Sprintf("go vet ./%s/ && echo vet ok", s.pkg()))
	default:
		// An edit: a comment line of a file, reworded.
		f := s.file()
		b, _ := os.ReadFile(filepath.Join(s.dir, f))
		var comments []string
		for _, l := range strings.Split(string(b), "\n") {
			if t := strings.TrimSpace(l); strings.HasPrefix(t, "// ") && len(t) > 20 && strings.Count(string(b), l) == 1 {
				comments = append(comments, l)
			}
		}
		if len(comments) == 0 {
			return s.pick()
		}
		c := comments[s.rng.IntN(len(comments))]
		return "edit_file", q(map[string]string{"path": f, "old_text": c, "new_text": c + " (checked)"})
	}
}
