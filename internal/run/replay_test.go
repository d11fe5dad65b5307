package run

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/records"
	"github.com/ask-cli/ask/internal/runtest"
	"github.com/ask-cli/ask/internal/settings"
)

// nativeReplayCase is one recorded conversation of a native protocol: a
// reply that calls tools, then the final answer.
type nativeReplayCase struct {
	name     string
	provider string
	keyEnv   string // "" when the provider needs no key
	stream   bool
	prompt   string
	replies  []string // files under testdata/replay, served in order
	// results are what the tools print for the recorded calls.
	results []string
	answer  string // a part of the final answer
}

var nativeReplayCases = []nativeReplayCase{
	{"anthropic", "anthropic", "ANTHROPIC_API_KEY", false, "what is the weather in Florence?",
		[]string{"anthropic/fantasy-sonnet4-tool.json", "anthropic/fantasy-sonnet4-tool-turn2.json"},
		[]string{"40 C in Florence,Italy"}, "The current weather in Florence, Italy is 40°C"},
	{"anthropic stream", "anthropic", "ANTHROPIC_API_KEY", true, "add and multiply 2 and 3",
		[]string{"anthropic/fantasy-sonnet4-multi-tool-stream.sse", "anthropic/llm-anthropic-thinking-tool-stream-turn2.sse"},
		[]string{"5", "6"}, "The version is **0.32a0**."},
	{"gemini", "gemini", "GEMINI_API_KEY", false, "what is the weather in Florence?",
		[]string{"gemini/fantasy-25flash-tool.json", "gemini/fantasy-25flash-tool-turn2.json"},
		[]string{"40 C in Florence,Italy"}, "The weather in Florence, Italy is 40 C."},
	{"gemini stream", "gemini", "GEMINI_API_KEY", true, "add and multiply 2 and 3",
		[]string{"gemini/fantasy-3pro-multi-tool-stream.sse", "gemini/fantasy-3pro-multi-tool-stream-turn2.sse"},
		[]string{"5", "6"}, "The sum of 2 and 3 is 5, and their product is 6."},
	{"ollama", "ollama", "", false, "what is the weather in Florence?",
		[]string{"ollama/fantasy-pr63-gptoss120b-tool.json", "ollama/fantasy-pr63-gptoss120b-tool-turn2.json"},
		[]string{"40 C in Florence, Italy"}, "The current temperature in **Florence, Italy** is **40\u202f°C**."},
	{"ollama stream", "ollama", "", true, "what is the weather in Florence?",
		[]string{"ollama/fantasy-pr63-gptoss120b-tool-stream.ndjson", "ollama/fantasy-pr63-gptoss120b-tool-turn2.ndjson"},
		[]string{"40 C in Florence, Italy"}, "The current temperature in **Florence, Italy** is **40\u202f°C**."},
	{"openai-responses", "openai-responses", "OPENAI_API_KEY", false, "what is the weather in Florence?",
		[]string{"openai-responses/fantasy-gpt4o-tool.json", "openai-responses/fantasy-gpt4o-tool-turn2.json"},
		[]string{"40 C in Florence, Italy"}, "The current temperature in Florence, Italy is 40°C."},
	{"openai-responses stream", "openai-responses", "OPENAI_API_KEY", true, "what is 1231 times 2331?",
		[]string{"openai-responses/llm-tool-use-stream.sse", "openai-responses/llm-tool-use-turn2.json"},
		[]string{"2869461"}, "1231 * 2331 = 2,869,461"},
}

// writeReplayTools declares the tools the recorded models call (add,
// multiply, weather) as user tools whose commands are the scripts of
// testdata/replay/tools, and returns the tools file's path.
func writeReplayTools(t *testing.T) string {
	t.Helper()
	scripts, err := filepath.Abs("testdata/replay/tools")
	if err != nil {
		t.Fatal(err)
	}
	numbers := json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`)
	place := json.RawMessage(`{"type":"object","properties":{"location":{"type":"string"}},"required":["location"]}`)
	type decl struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Command     string          `json:"command"`
		Risk        string          `json:"risk"`
	}
	file := struct {
		Tools []decl `json:"tools"`
	}{[]decl{
		{"add", "Add two numbers", numbers, "sh " + filepath.Join(scripts, "add.sh"), "read"},
		{"multiply", "Multiply two numbers", numbers, "sh " + filepath.Join(scripts, "multiply.sh"), "read"},
		{"weather", "Current weather at a location", place, "sh " + filepath.Join(scripts, "weather.sh"), "read"},
	}}
	b, err := json.Marshal(file)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tools.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestNativeReplay records a run on each native protocol, streamed and
// not, against a server that replays recorded bodies, with user tools
// that really run; then replays the transcript with no server: the same
// answer, exit 0, and --check finds the rebuilt requests equal to the
// recorded ones. A transcript whose first request was edited makes
// --check fail with a diff.
func TestNativeReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it replays every protocol with the tools running")
	}
	t.Parallel()
	toolsFile := writeReplayTools(t)
	for _, tt := range nativeReplayCases {
		t.Run(tt.name, func(t *testing.T) {
			var replies []fakeprovider.Reply
			for _, name := range tt.replies {
				b, err := os.ReadFile(filepath.Join("testdata/replay", name))
				if err != nil {
					t.Fatal(err)
				}
				replies = append(replies, fakeprovider.Reply{Body: string(b)})
			}
			srv := fakeprovider.Start(replies...)
			defer srv.Close()

			dir := t.TempDir()
			wd := filepath.Join(dir, "work")
			if err := os.Mkdir(wd, 0o755); err != nil {
				t.Fatal(err)
			}
			transcript := filepath.Join(dir, "run.jsonl")
			env := map[string]string{"ASK_BASE_URL": srv.URL, "HOME": dir}
			if tt.keyEnv != "" {
				env[tt.keyEnv] = "test-key-not-a-real-one-0000"
			}
			w := newWorld(t, nil).with("ASK_BASE_URL", srv.URL, "HOME", dir)
			w.wd, w.environ = wd, []string{"PATH=" + os.Getenv("PATH")}
			if tt.keyEnv != "" {
				w.with(tt.keyEnv, "test-key-not-a-real-one-0000")
			}
			flags := []any{"provider", tt.provider, "tools-file", toolsFile, "transcript", transcript}
			if !tt.stream {
				flags = append(flags, "no-stream", true)
			}
			rec := w.ask(tt.prompt, flags...)
			if rec.code != 0 {
				t.Fatalf("recording: exit %d, stderr:\n%s", rec.code, rec.stderr)
			}
			if !strings.Contains(rec.answer(), tt.answer) {
				t.Fatalf("recording: answer %q does not hold the recorded answer %q", rec.answer(), tt.answer)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 {
				t.Fatalf("the server got %d requests, want 2", len(reqs))
			}
			srv.Close()

			// The tools really ran: the transcript holds their output, and
			// the second request carried it back to the model.
			data, err := os.ReadFile(transcript)
			if err != nil {
				t.Fatal(err)
			}
			events, err := records.Read(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			// A step's calls run concurrently: compare the results sorted.
			var got []string
			for _, ev := range events {
				if ev.Type == records.TypeToolFinished {
					if ev.IsError {
						t.Errorf("tool %s failed: %s", ev.Name, ev.Content)
					}
					got = append(got, strings.TrimSpace(ev.Content))
				}
			}
			want := slices.Sorted(slices.Values(tt.results))
			if slices.Sort(got); !slices.Equal(got, want) {
				t.Errorf("tool results %q, want %q", got, want)
			}
			for _, r := range tt.results {
				if !bytes.Contains(reqs[1], []byte(r)) {
					t.Errorf("the second request does not carry the result %q:\n%s", r, reqs[1])
				}
			}

			// Edit the prompt inside the recorded first request only: the
			// rebuilt request (from run.started's settings) no longer
			// matches it.
			editedPath := filepath.Join(dir, "edited.jsonl")
			if err := os.WriteFile(editedPath, editFirstRequest(t, data, tt.prompt, "EDITED "+tt.prompt), 0o644); err != nil {
				t.Fatal(err)
			}
			diff := regexp.MustCompile(`(?m)^  request 1: \S+: ` + regexp.QuoteMeta(fmt.Sprintf("recorded %q, rebuilt %q", "EDITED "+tt.prompt, tt.prompt)) + `$`)

			// Offline: no base URL, no key, the server gone. The tools run
			// again, or with --recorded-results their results come from
			// the transcript; either way the answer and the requests are
			// the recorded ones.
			// Running the tools file's programs again needs the replaying
			// person's word (--yes): the transcript could have been edited.
			offline := &world{t: t, wd: wd, vars: map[string]string{"HOME": dir}, environ: w.environ}
			if r := offline.replay(transcript, ReplayOptions{}); r.code != fault.ExitUsage || !strings.Contains(r.err.Error(), "give --yes to start them") {
				t.Errorf("replay without --yes: exit %d, error %v; want 2 and how to allow the tools", r.code, r.err)
			}
			for name, opt := range map[string]ReplayOptions{
				"replay --yes":              {Invocation: invocation("yes", true)},
				"replay --recorded-results": {RecordedResults: true},
			} {
				chk := offline.replay(transcript, opt)
				if chk.code != 0 || chk.answer() != rec.answer() || chk.diffs != "" {
					t.Errorf("%s --check: exit %d, answer %q, want exit 0 and %q; stderr:\n%s\n%s", name, chk.code, chk.answer(), rec.answer(), chk.stderr, chk.diffs)
				}
				bad := offline.replay(editedPath, opt)
				if !diff.MatchString(bad.diffs) {
					t.Errorf("%s --check of an edited transcript: want the edit shown as a difference of request 1; got:\n%s", name, bad.diffs)
				}
			}
		})
	}
}

// editFirstRequest replaces old with new in the body of the transcript's
// first request event, and nowhere else.
func editFirstRequest(t *testing.T, transcript []byte, old, new string) []byte {
	t.Helper()
	lines := bytes.Split(transcript, []byte("\n"))
	for i, line := range lines {
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &ev) != nil || ev.Type != records.TypeRequest {
			continue
		}
		if !bytes.Contains(line, []byte(old)) {
			t.Fatalf("the first request does not hold %q:\n%s", old, line)
		}
		lines[i] = bytes.Replace(line, []byte(old), []byte(new), 1)
		return bytes.Join(lines, []byte("\n"))
	}
	t.Fatal("the transcript has no request event")
	return nil
}

// A run that used an MCP server replays offline: the recorded server
// command starts the server again, its tools really run, and the rebuilt
// requests equal the recorded ones. With --recorded-results no server is
// started and the requests still match.
func TestMCPRunReplays(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it starts the reference server three times (about 1.5 s)")
	}
	t.Parallel()
	bin := runtest.MCPServerBin(t, "mcp-server-everything")
	srv := fakeprovider.Start(
		fakeprovider.Reply{Calls: []providers.ToolCall{
			fakeprovider.Call("echo", "everything__echo", `{"message":"hello from ask"}`),
			fakeprovider.Call("sum", "everything__get-sum", `{"a":2,"b":3}`),
		}},
		fakeprovider.Reply{Text: "5, and it echoed"})
	defer srv.Close()
	transcript := filepath.Join(t.TempDir(), "run.jsonl")
	w := newWorld(t, srv)
	rec := w.ask("use the tools", "mcp", bin, "transcript", transcript)
	if rec.code != fault.ExitOK || rec.answer() != "5, and it echoed\n" {
		t.Fatalf("recording: exit %d, answer %q; stderr %s", rec.code, rec.answer(), rec.stderr)
	}
	srv.Close()

	// Starting the recorded MCP server again needs --yes.
	offline := &world{t: t, wd: w.wd, vars: map[string]string{}}
	for name, opt := range map[string]ReplayOptions{"--yes": {Invocation: invocation("yes", true)}, "--recorded-results": {RecordedResults: true}} {
		r := offline.replay(transcript, opt)
		if r.code != fault.ExitOK || r.answer() != rec.answer() || r.diffs != "" {
			t.Errorf("replay --check %s: exit %d, answer %q, want exit 0 and %q; stderr:\n%s\n%s", name, r.code, r.answer(), rec.answer(), r.stderr, r.diffs)
		}
	}
}

// TestReplayTakesEachRowFromItsSide is generated from the rows: a row
// marked Recorded is the transcript's whatever the replaying invocation
// gives (its flags, environment or config file); every other row is the
// invocation's, never the transcript's.
func TestReplayTakesEachRowFromItsSide(t *testing.T) {
	t.Parallel()
	start := records.Event{Type: records.TypeRunStarted, Provider: "openai", Model: "gpt-test", Mode: "agent",
		Settings: &records.Settings{Prompt: "x", MaxSteps: 5, Timeout: "1m", Stream: true}}
	events := []records.Event{start}
	recorded, _, _, err := FromTranscript(events, ReplayOptions{Workdir: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range settings.Rows() {
		if !r.IsSetting() || r.Name == "workdir" { // replay's own --workdir, checked by the replay tests
			continue
		}
		before, _, _ := recorded.Values.Get(r.Name)
		var inv settings.Values
		var given any
		for _, sample := range r.Samples().Good {
			v, err := r.Parse(sample)
			if err == nil && !reflect.DeepEqual(v, before) {
				given = v
				inv.Set(r.Name, v, "config c.json")
				break
			}
		}
		if given == nil {
			t.Errorf("%s: no good sample differs from the transcript's %v", r.Name, before)
			continue
		}
		s, _, _, err := FromTranscript(events, ReplayOptions{Workdir: "/w", Invocation: inv})
		if err != nil {
			t.Fatal(err)
		}
		got, src, _ := s.Values.Get(r.Name)
		switch {
		case r.Recorded && !reflect.DeepEqual(got, before):
			t.Errorf("%s (recorded): the invocation's %v replaced the transcript's %v", r.Name, given, before)
		case !r.Recorded && (src != "config c.json" || !reflect.DeepEqual(got, given)):
			t.Errorf("%s: %v from %q, want the invocation's %v", r.Name, got, src, given)
		}
	}
}
