package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/loop"
	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/records"
)

// answer is how a request answers one tool call: its id ("" when the
// protocol's form carries none) and, where the form has one, its name.
type answer struct{ id, name string }

// wire describes one native protocol's form of the things the loop test
// checks in a request.
type wire struct {
	// keyHeader is the header that carries the key, and its value for key "k".
	keyHeader, keyValue string
	// answers reads the results of the last step out of a request body.
	answers func(req []byte) []answer
}

var wires = map[string]wire{
	// Chat Completions: one role "tool" message per call, after the
	// assistant message.
	"openai": {"Authorization", "Bearer k", func(req []byte) []answer {
		var out []answer
		for _, m := range trailing(gjson.GetBytes(req, "messages"), func(m gjson.Result) bool { return m.Get("role").String() == "tool" }) {
			out = append(out, answer{id: m.Get("tool_call_id").String()})
		}
		return out
	}},
	// Responses: one function_call_output item per call, keyed by call_id.
	"responses": {"Authorization", "Bearer k", func(req []byte) []answer {
		var out []answer
		for _, it := range trailing(gjson.GetBytes(req, "input"), func(it gjson.Result) bool { return it.Get("type").String() == "function_call_output" }) {
			out = append(out, answer{id: it.Get("call_id").String()})
		}
		return out
	}},
	// Anthropic: ONE user message of tool_result blocks.
	"anthropic": {"X-Api-Key", "k", func(req []byte) []answer {
		last := gjson.GetBytes(req, "messages.@reverse.0")
		if last.Get("role").String() != "user" {
			return nil
		}
		var out []answer
		for _, b := range last.Get("content").Array() {
			if b.Get("type").String() == "tool_result" {
				out = append(out, answer{id: b.Get("tool_use_id").String()})
			}
		}
		return out
	}},
	// Gemini: ONE user content of functionResponse parts, each naming its
	// function; the id only where the model gave one.
	"gemini": {"X-Goog-Api-Key", "k", func(req []byte) []answer {
		last := gjson.GetBytes(req, "contents.@reverse.0")
		if last.Get("role").String() != "user" {
			return nil
		}
		var out []answer
		for _, p := range last.Get("parts").Array() {
			if fr := p.Get("functionResponse"); fr.Exists() && fr.Get("response").IsObject() {
				out = append(out, answer{id: fr.Get("id").String(), name: fr.Get("name").String()})
			}
		}
		return out
	}},
	// Ollama: one role "tool" message per call with tool_name and the id.
	"ollama": {"Authorization", "Bearer k", func(req []byte) []answer {
		var out []answer
		for _, m := range trailing(gjson.GetBytes(req, "messages"), func(m gjson.Result) bool { return m.Get("role").String() == "tool" }) {
			out = append(out, answer{id: m.Get("tool_call_id").String(), name: m.Get("tool_name").String()})
		}
		return out
	}},
}

// trailing returns the elements at the end of an array that match keep.
func trailing(arr gjson.Result, keep func(gjson.Result) bool) []gjson.Result {
	all := arr.Array()
	i := len(all)
	for i > 0 && keep(all[i-1]) {
		i--
	}
	return all[i:]
}

// generatedID reports whether the protocol made up a call's id because the
// model sent none; such ids never go back to the provider.
func generatedID(protocol, id string) bool {
	return protocol == "gemini" && strings.HasPrefix(id, "gemini_")
}

// TestNativeProtocols runs the loop against a fake server that replays
// recorded bodies of each native protocol, streamed and not, parallel calls
// included, and checks what the loop did with them: the calls reached the
// toolbox with the names and arguments the bodies hold, every call was
// answered in the next request in the protocol's own form, the model's
// message was echoed byte for byte, usage was summed over the steps, and
// the answer is the last reply's text.
func TestNativeProtocols(t *testing.T) {
	tests := []struct {
		name     string
		protocol string
		stream   bool
		replies  []string // testdata files served in order
		// wantTools are the calls of each step as "name compact-args",
		// sorted, since a step's calls run concurrently.
		wantTools [][]string
	}{
		{"openai parallel", "openai", false,
			[]string{"fantasy-gpt4o-multi-tool.json", "openai-chat/fantasy-gpt4o-multi-tool-turn2.json"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}}},
		{"openai parallel stream", "openai", true,
			[]string{"fantasy-gpt4o-multi-tool-stream.sse", "openai-chat/llm-gpt4omini-tool-stream-turn2.sse"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}}},
		{"responses parallel", "responses", false,
			[]string{"openai-responses/fantasy-gpt5-multi-tool.json", "openai-responses/fantasy-gpt5-multi-tool-turn2.json"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}}},
		{"responses parallel stream", "responses", true,
			[]string{"openai-responses/fantasy-gpt4o-multi-tool-stream.sse", "openai-responses/fantasy-gpt4o-tool-turn2.json"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}}},
		{"anthropic parallel", "anthropic", false,
			[]string{"anthropic/fantasy-sonnet4-multi-tool.json", "anthropic/fantasy-sonnet4-multi-tool-turn2.json"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}}},
		{"anthropic parallel stream", "anthropic", true,
			[]string{"anthropic/fantasy-sonnet4-multi-tool-stream.sse", "anthropic/llm-anthropic-thinking-tool-stream-turn2.sse"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}}},
		{"gemini 3 parallel with ids", "gemini", false,
			[]string{"gemini/fantasy-3pro-multi-tool.json", "gemini/fantasy-3pro-multi-tool-turn2.json"},
			[][]string{{`add {"b":3,"a":2}`, `multiply {"b":3,"a":2}`}}},
		{"gemini 2.5 parallel without ids", "gemini", false,
			[]string{"gemini/fantasy-25pro-multi-tool.json", "gemini/fantasy-25flash-tool-turn2.json"},
			[][]string{{`add {"b":3,"a":2}`, `multiply {"b":3,"a":2}`}}},
		{"gemini three calls to one function", "gemini", false,
			[]string{"gemini/pydantic-three-parallel-calls.json", "gemini/fantasy-3pro-multi-tool-turn2.json"},
			[][]string{{`generate_topic {}`, `generate_topic {}`, `generate_topic {}`}}},
		{"gemini parallel stream", "gemini", true,
			[]string{"gemini/fantasy-3pro-multi-tool-stream.sse", "gemini/fantasy-3pro-multi-tool-stream-turn2.sse"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"b":3,"a":2}`}}},
		{"gemini stream as a JSON array", "gemini", true,
			[]string{"gemini/llm-gemini-3flash-thought-signatures.stream-array.json", "gemini/llm-gemini-3flash-thought-signatures-turn2.stream-array.json"},
			[][]string{{`multiply {"y":3,"x":5}`}}},
		{"ollama chain of calls", "ollama", false,
			[]string{"ollama/fantasy-pr63-gptoss120b-multi-tool.json", "ollama/fantasy-pr63-gptoss120b-multi-tool-2.json", "ollama/fantasy-pr63-gptoss120b-tool-turn2.json"},
			[][]string{{`add {"a":2,"b":3}`}, {`multiply {"a":2,"b":3}`}}},
		{"ollama parallel stream", "ollama", true,
			[]string{"ollama/handmade-parallel-stream.ndjson", "ollama/fantasy-pr63-gptoss120b-multi-tool-stream.ndjson", "ollama/fantasy-pr63-gptoss120b-tool-turn2.ndjson"},
			[][]string{{`add {"a":2,"b":3}`, `multiply {"a":2,"b":3}`}, {`add {"a":2,"b":3}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := catalog.NewProtocol(tt.protocol)
			if err != nil {
				t.Fatal(err)
			}
			w := wires[tt.protocol]
			bodies := make([][]byte, len(tt.replies))
			replies := make([]fakeprovider.Reply, len(tt.replies))
			for i, name := range tt.replies {
				b, err := os.ReadFile(filepath.Join("testdata", name))
				if err != nil {
					t.Fatal(err)
				}
				bodies[i], replies[i] = b, fakeprovider.Reply{Body: string(b)}
			}
			// What each reply says, read by the protocol alone: the
			// reference the loop's behaviour is checked against.
			turns := make([]*providers.Turn, len(bodies))
			for i, b := range bodies {
				if turns[i], err = providers.ParseBody(p, b); err != nil {
					t.Fatalf("%s: %v", tt.replies[i], err)
				}
			}

			box := &fakeTools{}
			r := runNative(t, p, box, tt.stream, replies)
			if r.res.Status != loop.StatusCompleted {
				t.Fatalf("status = %q (err %v), want completed", r.res.Status, r.res.Err)
			}
			reqs := r.srv.Requests()
			if len(reqs) != len(bodies) || r.res.Steps != len(bodies) {
				t.Fatalf("%d requests, %d steps for %d replies", len(reqs), r.res.Steps, len(bodies))
			}
			for i, h := range r.srv.Headers() {
				if got := h.Get(w.keyHeader); got != w.keyValue {
					t.Errorf("request %d: %s = %q, want %q", i, w.keyHeader, got, w.keyValue)
				}
			}

			// The calls reached the toolbox as the bodies hold them.
			var ran []string
			for _, c := range box.calls {
				name, args, _ := strings.Cut(c, " ")
				ran = append(ran, name+" "+compact(t, args))
			}
			slices.Sort(ran)
			var want []string
			for _, step := range tt.wantTools {
				want = append(want, step...)
			}
			slices.Sort(want)
			if strings.Join(ran, "|") != strings.Join(want, "|") {
				t.Errorf("toolbox ran %q, want %q", ran, want)
			}

			callStep := 0
			for i, turn := range turns {
				if len(turn.Calls) == 0 {
					continue
				}
				if callStep >= len(tt.wantTools) || len(turn.Calls) != len(tt.wantTools[callStep]) {
					t.Fatalf("reply %d holds %d calls, want the calls of step %d: %v", i, len(turn.Calls), callStep, tt.wantTools)
				}
				callStep++
				next := reqs[i+1]
				// Every call is answered, in order, in the protocol's form.
				got := w.answers(next)
				if len(got) != len(turn.Calls) {
					t.Fatalf("request %d answers %d calls, want %d: %s", i+1, len(got), len(turn.Calls), next)
				}
				for j, c := range turn.Calls {
					wantID := c.ID
					if generatedID(tt.protocol, c.ID) {
						wantID = ""
					}
					if got[j].id != wantID || (got[j].name != "" && got[j].name != c.Name) {
						t.Errorf("request %d answer %d = %+v, want id %q name %q", i+1, j, got[j], wantID, c.Name)
					}
					if tt.protocol == "gemini" && got[j].name != c.Name {
						t.Errorf("request %d answer %d names %q, want %q", i+1, j, got[j].name, c.Name)
					}
				}
				// The model's message comes back byte for byte, before the
				// results.
				for _, m := range turn.Messages {
					at := bytes.Index(next, m)
					if at < 0 {
						t.Errorf("request %d does not echo the reply's message byte for byte:\n%s", i+1, m)
					}
				}
			}

			// The loop recorded each step's calls with the ids the protocol gave.
			var gotIDs, wantIDs []string
			for _, c := range r.res.Calls {
				gotIDs = append(gotIDs, c.Name+"="+c.ID)
			}
			for _, turn := range turns {
				for _, c := range turn.Calls {
					wantIDs = append(wantIDs, c.Name+"="+c.ID)
				}
			}
			if strings.Join(gotIDs, " ") != strings.Join(wantIDs, " ") {
				t.Errorf("result calls %v, want %v", gotIDs, wantIDs)
			}

			// Usage is the sum of the replies' usage.
			var sum providers.Usage
			for _, turn := range turns {
				sum = sum.Add(turn.Usage)
			}
			if r.res.Usage != sum || sum.TotalTokens == 0 {
				t.Errorf("usage = %+v, want the sum %+v", r.res.Usage, sum)
			}
			if len(r.res.UsagePerStep) != len(turns) {
				t.Errorf("%d usages per step for %d steps", len(r.res.UsagePerStep), len(turns))
			}

			// The answer is the last reply's text.
			last := turns[len(turns)-1]
			if len(last.Calls) != 0 || last.Text == "" || r.res.Answer != last.Text {
				t.Errorf("answer = %q, want the last reply's text %q", r.res.Answer, last.Text)
			}
		})
	}
}

// runNative runs the loop against a fake server with protocol p, the way
// cmd/ask wires it.
func runNative(t *testing.T, p providers.Protocol, box loop.Toolbox, stream bool, replies []fakeprovider.Reply) run {
	t.Helper()
	srv := fakeprovider.Start(replies...)
	t.Cleanup(srv.Close)
	var buf bytes.Buffer
	cfg := loop.Config{
		Model: &providers.Caller{Provider: "fake-" + p.Name(), Protocol: p, BaseURL: srv.URL, Model: "m", Key: "k",
			Sleep: func(context.Context, time.Duration) error { return nil }},
		Prompt:   "Add and multiply the number 2 and 3",
		System:   "You are a helpful assistant.",
		Tools:    []providers.Tool{{Name: "add"}, {Name: "multiply"}, {Name: "generate_topic"}},
		Toolbox:  box,
		Stream:   stream,
		Recorder: records.NewRecorder(&buf),
	}
	cfg.Recorder.Emit(records.Event{Type: records.TypeRunStarted})
	res := loop.Run(context.Background(), cfg)
	events, err := records.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return run{res: res, srv: srv, events: events}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		t.Fatalf("arguments %q are not JSON: %v", s, err)
	}
	return b.String()
}

// TestGeminiHistoryCarriesSignatures follows a Gemini run through two
// steps: the second request holds the model's content exactly as the first
// reply gave it, the thoughtSignature on the first call only, then ONE user
// content answering both calls by id.
func TestGeminiHistoryCarriesSignatures(t *testing.T) {
	p, err := catalog.NewProtocol("gemini")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile("testdata/gemini/fantasy-3pro-multi-tool-stream.sse")
	if err != nil {
		t.Fatal(err)
	}
	final, err := os.ReadFile("testdata/gemini/fantasy-3pro-multi-tool-stream-turn2.sse")
	if err != nil {
		t.Fatal(err)
	}
	r := runNative(t, p, &fakeTools{}, true, []fakeprovider.Reply{{Body: string(body)}, {Body: string(final)}})
	if r.res.Status != loop.StatusCompleted {
		t.Fatalf("status %q: %v", r.res.Status, r.res.Err)
	}
	contents := gjson.GetBytes(r.srv.Requests()[1], "contents").Array()
	if len(contents) != 3 {
		t.Fatalf("%d contents, want user, model, user", len(contents))
	}
	model := contents[1].Get("parts").Array()
	if len(model) != 2 || !model[0].Get("thoughtSignature").Exists() || model[1].Get("thoughtSignature").Exists() {
		t.Errorf("model parts = %s, want two calls, the first signed", contents[1].Raw)
	}
	var recorded string
	_ = providers.ReadSSE(bytes.NewReader(body), func(ev providers.Event) error {
		if s := gjson.GetBytes(ev.Data, "candidates.0.content.parts.0.thoughtSignature"); s.Exists() && recorded == "" {
			recorded = s.Raw
		}
		return nil
	})
	if got := model[0].Get("thoughtSignature").Raw; got != recorded || recorded == "" {
		t.Errorf("signature echoed as %.40s…, recorded %.40s…", got, recorded)
	}
	results := contents[2].Get("parts").Array()
	if contents[2].Get("role").String() != "user" || len(results) != 2 ||
		results[0].Get("functionResponse.id").String() != "8hd01vsf" || results[1].Get("functionResponse.id").String() != "k0srpqrc" ||
		results[0].Get("functionResponse.response.output").String() != `add({"a": 2,"b": 3}) ok` {
		t.Errorf("results content = %s", contents[2].Raw)
	}
	// The transcript shows the calls with the model's ids.
	var sawAssistant bool
	for _, ev := range r.events {
		if ev.Type == records.TypeAssistant && len(ev.ToolCalls) == 2 {
			sawAssistant = ev.ToolCalls[0].ID == "8hd01vsf" && ev.ToolCalls[1].ID == "k0srpqrc"
		}
	}
	if !sawAssistant {
		t.Error("no assistant event with the two calls and their ids")
	}
}
