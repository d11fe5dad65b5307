package run

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
