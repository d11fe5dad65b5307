package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/runtest"
	"github.com/ask-cli/ask/internal/settings"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// knobWire is where each protocol puts the knobs and the prompt's image,
// with the recorded reply a run of it gets and the schema its requests
// match in the official spec ("" where there is no spec).
var knobWire = map[string]struct {
	reply, temperature, image, spec, specSchema string
	reasoning                                   map[string]string // catalog.Provider.Reasoning → path
}{
	"openai": {"openai/testdata/openai-chat/fantasy-gpt4o-tool-turn2.json", "temperature", "messages.1.content.1.image_url.url", "openai-openapi.yaml", "CreateChatCompletionRequest",
		map[string]string{catalog.ReasoningEffort: "reasoning_effort", catalog.ReasoningObject: "reasoning.effort"}},
	"responses": {"responses/testdata/fantasy-gpt4o-tool-turn2.json", "temperature", "input.0.content.1.image_url", "openai-openapi.yaml", "CreateResponse",
		map[string]string{catalog.ReasoningObject: "reasoning.effort"}},
	"anthropic": {"anthropic/testdata/fantasy-sonnet4-tool-turn2.json", "temperature", "messages.0.content.0.source.data", "", "",
		map[string]string{catalog.Thinking: "thinking.budget_tokens"}},
	"gemini": {"gemini/testdata/fantasy-25flash-tool-turn2.json", "generationConfig.temperature", "contents.0.parts.0.inlineData.data", "", "",
		map[string]string{catalog.ThinkingConfig: "generationConfig.thinkingConfig.thinkingBudget"}},
	"ollama": {"ollama/testdata/fantasy-pr63-gptoss120b-tool-turn2.json", "options.temperature", "messages.1.images.0", "ollama-openapi.yaml", "ChatRequest",
		map[string]string{catalog.Think: "think"}},
}

// TestKnobsWithAttachments: --temperature and --reasoning go with -a, to
// every provider that takes them, in the request the run sends (a run once
// failed with "the protocol takes no attachments" when a knob was set);
// where the protocol has an official spec, that request matches it.
func TestKnobsWithAttachments(t *testing.T) {
	t.Parallel()
	image := filepath.Join(providertest.AttachDir(t), "pixel.png")
	cases := 0
	for _, row := range catalog.All() {
		if row.Attach == nil || row.MaxTemperature == 0 {
			continue
		}
		wire, ok := knobWire[row.Protocol]
		if !ok {
			t.Fatalf("%s: no knobWire entry for protocol %s", row.Name, row.Protocol)
		}
		type knob struct {
			name        string
			temperature Setting[float64]
			reasoning   string
			path, want  string // the field the knob becomes; want "" takes any value
		}
		knobs := []knob{{"temperature", Given(0.3, "flag --temperature"), "", wire.temperature, "0.3"}}
		if row.Reasoning != "" {
			path := wire.reasoning[row.Reasoning]
			if path == "" {
				t.Fatalf("%s: no path for reasoning field %s", row.Name, row.Reasoning)
			}
			want := "medium"
			if row.Protocol == "anthropic" || row.Protocol == "gemini" {
				want = "" // a token budget
			}
			knobs = append(knobs, knob{"reasoning", Setting[float64]{}, "medium", path, want})
		}
		for _, k := range knobs {
			cases++
			t.Run(row.Name+"/"+k.name, func(t *testing.T) {
				t.Parallel()
				srv := serveRecorded(t, "../providers/"+wire.reply)
				vars := map[string]string{}
				for _, v := range row.KeyEnv {
					vars[v] = "fake-test-key-0000"
				}
				e := testEnv(t, vars)
				model := "some-model"
				if row.Protocol == "gemini" {
					model = "gemini-2.5-flash" // a model that thinks
				}
				s, err := Resolve(Inputs{Getenv: e.Getenv, Wd: e.Wd, Flags: Settings{Values: settings.Values{Provider: Given(row.Name, "test"), Model: Given(model, "test"), BaseURL: Given(srv.URL, "test"),
					NoStream: Given(true, "test"), NoTools: Given(true, "test"),
					Attach:      Given([]string{image}, "flag --attach"),
					Temperature: k.temperature, Reasoning: Given(k.reasoning, "flag --reasoning"),
				},
				}})
				if err != nil {
					t.Fatal(err)
				}
				// What `ask provider request` prints, and what the run sends.
				r, err := New(context.Background(), s, e)
				if err != nil {
					t.Fatal(err)
				}
				first, err := r.FirstRequest("describe")
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
				execute(t, s, e, "describe", func(res *Result) {
					if res.Status != loop.StatusCompleted {
						t.Fatalf("status %s, err %v", res.Status, res.Err)
					}
				})
				if len(srv.bodies) != 1 {
					t.Fatalf("%d requests", len(srv.bodies))
				}
				for what, body := range map[string][]byte{"the first request": first, "the request sent": srv.bodies[0]} {
					got := gjson.GetBytes(body, k.path)
					if !got.Exists() || (k.want != "" && got.String() != k.want) {
						t.Errorf("%s: %s = %s, want %q", what, k.path, got.Raw, k.want)
					}
					if img := gjson.GetBytes(body, wire.image).String(); !strings.Contains(img, "iVBORw0KGgo") {
						t.Errorf("%s: %s = %.60q, want the PNG", what, wire.image, img)
					}
					if wire.spec == "" || (row.Reasoning == catalog.ReasoningObject && row.Protocol == "openai" && k.reasoning != "") {
						continue // no spec, or OpenRouter's reasoning object, which OpenAI's spec lacks
					}
					spec := providertest.SpecPath(t, wire.spec)
					if err := providertest.ValidateSpec(t, spec, wire.specSchema, body); err != nil {
						t.Errorf("%s does not match %s: %v\n%s", what, wire.specSchema, err, providertest.Indent(body))
					}
				}
			})
		}
	}
	if cases < 10 {
		t.Errorf("%d cases: the catalog lost the providers that take knobs and files", cases)
	}
}

// TestKnobErrors: a knob the provider does not have, or a value it does not
// take, is a usage error (exit 2) naming what to change, found before a
// missing key, and nothing is sent; a run built to send nothing (`ask
// provider request`) meets the same error.
func TestKnobErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		flags   []any
		wantErr string
	}{
		{"temperature above the range", []any{"provider", "openai", "temperature", 2.5}, "--temperature 2.5: give a number from 0 to 2 (flag --temperature)"},
		{"negative temperature", []any{"provider", "openai", "temperature", -0.1}, "--temperature -0.1: give a number from 0 to 2"},
		{"anthropic's range", []any{"provider", "anthropic", "temperature", 1.5}, "anthropic takes 0 to 1"},
		{"moonshot's range", []any{"provider", "moonshot", "temperature", 1.2}, "moonshot takes 0 to 1"},
		{"unknown level", []any{"provider", "openai", "reasoning", "extreme"}, `--reasoning "extreme": choose low, medium or high (flag --reasoning)`},
		{"no reasoning setting", []any{"provider", "moonshot", "reasoning", "low"}, "--reasoning: moonshot has no reasoning setting"},
		{"a local program takes neither", []any{"provider", "command", "command", "cat", "temperature", 0.5}, "--temperature: command takes no temperature"},
		{"a local program has no reasoning", []any{"provider", "command", "command", "cat", "reasoning", "high"}, "--reasoning: command has no reasoning setting"},
		{"thinking with a temperature", []any{"provider", "anthropic", "reasoning", "low", "temperature", 0.5}, "takes no temperature but 1, got 0.5"},
		{"a Gemini model that does not think", []any{"provider", "gemini", "model", "gemini-2.0-flash", "reasoning", "low"}, "gemini-2.0-flash has no thinking to configure"},
		{"a level Gemini 3 Pro does not take", []any{"provider", "gemini", "model", "gemini-3-pro-preview", "reasoning", "medium"}, "takes a thinking level of low or high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := fakeprovider.Start(fakeprovider.Reply{Text: "never"})
			defer srv.Close()
			// Only openai has a key: a flag to fix comes before a key to set.
			for _, offline := range []bool{false, true} {
				w := newWorld(t, srv)
				w.offline = offline
				r := w.ask("hi", tt.flags...)
				if r.code != fault.ExitUsage || !strings.Contains(r.stderr, tt.wantErr) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
					t.Errorf("flags %v (offline %v): exit %d, stderr %q; want exit 2 and one line with %q", tt.flags, offline, r.code, r.stderr, tt.wantErr)
				}
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("%d requests sent", n)
			}
		})
	}
}

// TestKnobsFromConfigAndRecorded: the config file sets the knobs (a flag
// wins), run.started records them and a replay sends them again (--check
// compares every rebuilt request with the recorded one).
func TestKnobsFromConfigAndRecorded(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	runtest.WriteConfig(t, home, `{"temperature": 0.4, "reasoning": "low"}`)
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "done"})
	defer srv.Close()
	w := newWorld(t, srv).with("HOME", home)
	transcript := filepath.Join(w.wd, "run.jsonl")
	r := w.ask("hi", "reasoning", "high", "transcript", transcript)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	sent := gjson.ParseBytes(srv.Requests()[0])
	if sent.Get("temperature").Float() != 0.4 || sent.Get("reasoning_effort").String() != "high" {
		t.Errorf("sent temperature %s, reasoning_effort %s; want 0.4 from the file and high from the flag", sent.Get("temperature").Raw, sent.Get("reasoning_effort").Raw)
	}
	set := r.events[0].Settings
	if set == nil || set.Temperature == nil || *set.Temperature != 0.4 || set.Reasoning != "high" {
		t.Fatalf("run.started settings = %+v; want temperature 0.4, reasoning high", set)
	}
	srv.Close()
	replay := newWorld(t, nil)
	replay.wd = w.wd
	if rp := replay.replay(transcript, ReplayOptions{}); rp.code != 0 || rp.answer() != "done\n" || rp.diffs != "" {
		t.Errorf("replay --check: exit %d, answer %q, stderr %s\n%s", rp.code, rp.answer(), rp.stderr, rp.diffs)
	}
}

// TestMaxTokensReachesEachProtocol sends one request per protocol to the
// fake server (which answers only Chat Completions properly; the others
// fail after the request, which is all this test reads).
func TestMaxTokensReachesEachProtocol(t *testing.T) {
	t.Parallel()
	refusal := fakeprovider.Reply{Status: 400, Body: `{"error":{"message":"test stops here","type":"invalid_request_error"}}`}
	tests := []struct {
		provider, model string
		path            string // where the cap must be in the body
		absent          string // a field that must not be there
	}{
		{"openai", "gpt-4o-mini", "max_tokens", "max_completion_tokens"},
		{"openai", "o3-mini", "max_completion_tokens", "max_tokens"},
		{"openai", "gpt-5", "max_completion_tokens", "max_tokens"},
		{"openrouter", "openai/gpt-5-mini", "max_completion_tokens", "max_tokens"},
		{"deepseek", "deepseek-chat", "max_tokens", "max_completion_tokens"},
		{"openai-responses", "gpt-4o-mini", "max_output_tokens", "max_tokens"},
		{"anthropic", "claude-sonnet-4-5", "max_tokens", "max_output_tokens"},
		{"ollama", "qwen3", "options.num_predict", "max_tokens"},
	}
	keys := []string{"OPENAI_API_KEY", "fake-test", "ANTHROPIC_API_KEY", "fake-ant-test", "OPENROUTER_API_KEY", "fake-or-test", "DEEPSEEK_API_KEY", "fake-test"}
	for _, tt := range tests {
		t.Run(tt.provider+" "+tt.model, func(t *testing.T) {
			srv := fakeprovider.Start(refusal)
			defer srv.Close()
			newWorld(t, nil).with(keys...).ask("q", "provider", tt.provider, "model", tt.model, "base-url", srv.URL, "no-stream", true, "max-tokens", 777)
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			if got := gjson.GetBytes(reqs[0], tt.path).Int(); got != 777 {
				t.Errorf("%s = %d in %s", tt.path, got, reqs[0])
			}
			if gjson.GetBytes(reqs[0], tt.absent).Exists() {
				t.Errorf("body has %s too: %s", tt.absent, reqs[0])
			}
		})
	}
	if r := newWorld(t, nil).ask("q", "max-tokens", -5); r.code != fault.ExitUsage || !strings.Contains(r.stderr, "--max-tokens") {
		t.Errorf("negative --max-tokens: code %d stderr %q", r.code, r.stderr)
	}
}
