package responses

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// rebuild makes the follow-up request ask would send after a recorded step:
// the earlier request's input, the reply's Turn.Messages and the results
// that the recorded follow-up carries, formatted by FormatToolResults.
func rebuild(t *testing.T, prevRequest, prevResponse, next string) (body []byte, turn *providers.Turn) {
	t.Helper()
	p := New()
	req := requestOf(recorded(t, prevRequest))
	turn, err := p.ParseResponse(providertest.Read(t, prevResponse))
	if err != nil {
		t.Fatalf("parse %s: %v", prevResponse, err)
	}
	results, err := p.FormatToolResults(trailingResults(recorded(t, next)))
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(append(req.Messages, turn.Messages...), results...)
	body, err = p.BuildRequest(req)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return body, turn
}

// TestFollowUps rebuilds every recorded stateless follow-up from the turn
// before it and compares it with the recording: the whole input must mean
// the same, and so must the rest of the body once the fields a client chose
// differently are dropped from both sides.
func TestFollowUps(t *testing.T) {
	tests := []struct {
		name                         string
		prevRequest, prevResponse    string
		next                         string
		drop                         []string
		argsReserialisedByRecorder   bool
		wantReasoningID, droppedRSID string
	}{
		{
			name:        "gpt-4o one call",
			prevRequest: "fantasy-gpt4o-tool.request.json", prevResponse: "fantasy-gpt4o-tool.json",
			next: "fantasy-gpt4o-tool-turn2.request.json",
			// fantasy sends tool_choice "auto", the API's default, which
			// ask leaves out.
			drop: []string{"tool_choice"},
		},
		{
			name:        "gpt-5 parallel calls, reasoning without encrypted_content",
			prevRequest: "fantasy-gpt5-multi-tool.request.json", prevResponse: "fantasy-gpt5-multi-tool.json",
			next: "fantasy-gpt5-multi-tool-turn2.request.json",
			// tool_choice as above. include: ask asks gpt-5 for encrypted
			// reasoning, fantasy did not, which is why its reasoning item
			// came back without encrypted_content and cannot be replayed.
			drop:        []string{"tool_choice", "include"},
			droppedRSID: "rs_0adb81d1c2f6e68a016a3c12286a0081a184e1b23cca2ac02d",
		},
		{
			name:        "gpt-5.5 one call",
			prevRequest: "llm-tool-use.request.json", prevResponse: "llm-tool-use.json",
			next: "llm-tool-use-turn2.request.json",
			// reasoning: llm sets an effort, ask's Request has no such knob.
			// stream: llm sends false, ask leaves the default out.
			// tools.strict: llm omits it (and the server then made the tools
			// strict, as its response shows); ask always sends false.
			drop:                       []string{"reasoning", "stream", "tools.strict"},
			argsReserialisedByRecorder: true,
		},
		{
			name:        "gpt-5.5 encrypted reasoning round trip",
			prevRequest: "llm-encrypted-reasoning-1.request.json", prevResponse: "llm-encrypted-reasoning-1.json",
			next:                       "llm-encrypted-reasoning-2.request.json",
			drop:                       []string{"reasoning", "stream", "tools.strict"},
			argsReserialisedByRecorder: true,
			wantReasoningID:            "rs_0f4809b27460351d0169fab21897dc8196960e8680fb72a88d",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, turn := rebuild(t, tt.prevRequest, tt.prevResponse, tt.next)
			want := providertest.Read(t, tt.next)

			gotInput := []byte(gjson.GetBytes(got, "input").Raw)
			wantInput := []byte(gjson.GetBytes(want, "input").Raw)
			if tt.argsReserialisedByRecorder {
				gotInput, wantInput = normalizeArguments(t, gotInput), normalizeArguments(t, wantInput)
			}
			providertest.SameJSON(t, "input", gotInput, wantInput)

			drop := append([]string{"input"}, tt.drop...)
			providertest.SameJSON(t, "body without input and "+strings.Join(tt.drop, ", "), without(t, got, drop...), without(t, want, drop...))

			checkReplay(t, got)
			if err := validateCreateResponse(t, got); err != nil {
				t.Errorf("rebuilt request is not a valid CreateResponse: %v", err)
			}

			// The calls' arguments travel exactly as the model produced
			// them, and the outputs answer them by call_id.
			input := gjson.GetBytes(got, "input").Array()
			for _, c := range turn.Calls {
				var echoed, answered bool
				for _, it := range input {
					if it.Get("call_id").String() != c.ID {
						continue
					}
					switch it.Get("type").String() {
					case "function_call":
						echoed = true
						if it.Get("arguments").String() != c.Arguments {
							t.Errorf("call %s: echoed arguments %s, model produced %s", c.ID, it.Get("arguments").String(), c.Arguments)
						}
					case "function_call_output":
						answered = true
					}
				}
				if !echoed || !answered {
					t.Errorf("call %s: echoed %v, answered %v", c.ID, echoed, answered)
				}
			}

			if tt.wantReasoningID != "" {
				assertReasoningBeforeCall(t, got, tt.prevResponse, tt.wantReasoningID)
			}
			if tt.droppedRSID != "" && strings.Contains(string(got), tt.droppedRSID) {
				t.Errorf("reasoning item %s has no encrypted_content but is replayed", tt.droppedRSID)
			}
		})
	}
}

// assertReasoningBeforeCall checks that a reasoning item of the previous
// response is replayed with its id and its encrypted_content byte for byte,
// immediately before the function_call that followed it.
func assertReasoningBeforeCall(t *testing.T, body []byte, prevResponse, rsID string) {
	t.Helper()
	var original gjson.Result
	for _, it := range recorded(t, prevResponse).Get("output").Array() {
		if it.Get("id").String() == rsID {
			original = it
		}
	}
	if !original.Exists() {
		t.Fatalf("%s has no item %s", prevResponse, rsID)
	}
	input := gjson.GetBytes(body, "input").Array()
	for i, it := range input {
		if it.Get("id").String() != rsID {
			continue
		}
		if it.Get("type").String() != "reasoning" {
			t.Errorf("item %s has type %q", rsID, it.Get("type").String())
		}
		if it.Get("encrypted_content").Raw != original.Get("encrypted_content").Raw {
			t.Errorf("reasoning %s: encrypted_content not echoed byte for byte", rsID)
		}
		if i+1 >= len(input) || input[i+1].Get("type").String() != "function_call" {
			t.Errorf("reasoning %s is not immediately followed by its function_call", rsID)
		}
		return
	}
	t.Errorf("reasoning item %s with encrypted_content is not replayed", rsID)
}

// TestInterleavedHistory rebuilds the multi-turn history of
// llm-interleaved-reasoning-4.request.json: three earlier turns, each a
// reasoning item (with encrypted_content) and a function_call, each
// answered by a function_call_output. The earlier responses are not in the
// recording, so each is reconstructed from the history as the server sends
// it: the same reasoning item, and the function_call with an "fc_" id and
// "status" added (both of which the echo must drop again). Then the real
// fourth response (five parallel calls) is carried into a fifth request.
func TestInterleavedHistory(t *testing.T) {
	p := New()
	rec := recorded(t, "llm-interleaved-reasoning-4.request.json")
	recInput := rec.Get("input").Array()
	req := requestOf(rec)
	req.Messages = []json.RawMessage{json.RawMessage(recInput[0].Raw)} // the user's question

	for i := 1; i+2 < len(recInput); i += 3 {
		rs, fc, out := recInput[i], recInput[i+1], recInput[i+2]
		if rs.Get("type").String() != "reasoning" || fc.Get("type").String() != "function_call" || out.Get("type").String() != "function_call_output" {
			t.Fatalf("input[%d:%d] is not a reasoning, function_call, function_call_output triple", i, i+3)
		}
		call, err := providers.Set([]byte(fc.Raw), "id", "fc_reconstructed_"+fc.Get("call_id").String())
		if err != nil {
			t.Fatal(err)
		}
		if call, err = providers.Set(call, "status", "completed"); err != nil {
			t.Fatal(err)
		}
		response := providertest.Marshal(t, map[string]any{
			"object": "response", "status": "completed", "error": nil,
			"output": []json.RawMessage{json.RawMessage(rs.Raw), call},
		})
		turn, err := p.ParseResponse(response)
		if err != nil {
			t.Fatalf("turn %d: %v", i/3+1, err)
		}
		results, err := p.FormatToolResults([]providers.ToolResult{{ID: turn.Calls[0].ID, Content: out.Get("output").String()}})
		if err != nil {
			t.Fatal(err)
		}
		req.Messages = append(append(req.Messages, turn.Messages...), results...)
	}
	body, err := p.BuildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	// reasoning, stream and tools.strict: chosen differently by llm, as in
	// TestFollowUps. Arguments are kept as recorded here, so no
	// normalisation is needed.
	providertest.SameJSON(t, "input", []byte(gjson.GetBytes(body, "input").Raw), []byte(rec.Get("input").Raw))
	drop := []string{"input", "reasoning", "stream", "tools.strict"}
	providertest.SameJSON(t, "body", without(t, body, drop...), without(t, []byte(rec.Raw), drop...))
	checkReplay(t, body)
	if err := validateCreateResponse(t, body); err != nil {
		t.Errorf("rebuilt request is not a valid CreateResponse: %v", err)
	}

	// Turn 4 → 5: the reasoning item comes first, then the five calls, then
	// five outputs keyed by call_id.
	turn, err := p.ParseResponse(providertest.Read(t, "llm-interleaved-reasoning-4.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(turn.Calls) != 5 {
		t.Fatalf("turn 4 has %d calls, want 5", len(turn.Calls))
	}
	var results []providers.ToolResult
	for _, c := range turn.Calls {
		results = append(results, providers.ToolResult{ID: c.ID, Name: c.Name, Content: "unknown key", IsError: true})
	}
	outputs, err := p.FormatToolResults(results)
	if err != nil {
		t.Fatal(err)
	}
	req.Messages = append(append(req.Messages, turn.Messages...), outputs...)
	body, err = p.BuildRequest(req)
	if err != nil {
		t.Fatal(err)
	}
	checkReplay(t, body)
	assertReasoningBeforeCall(t, body, "llm-interleaved-reasoning-4.json", "rs_0429c1fcf5cbfa350169fabfeff8708197a93aabe0257d06a5")
	if err := validateCreateResponse(t, body); err != nil {
		t.Errorf("turn 5 request is not a valid CreateResponse: %v", err)
	}
	tail := gjson.GetBytes(body, "input").Array()
	tail = tail[len(tail)-5:]
	for i, it := range tail {
		if it.Get("call_id").String() != turn.Calls[i].ID || it.Get("output").String() != "Error: unknown key" {
			t.Errorf("output %d = %s, want call_id %s and a marked error", i, it.Raw, turn.Calls[i].ID)
		}
	}
}

// TestStatefulChain looks at the pydantic-ai recordings, which use the
// STATEFUL mode (store:true + previous_response_id, sending only the new
// items). ask does not use that mode, so only the part that is the same in
// both modes is compared: the function_call_output item for the turn-2
// call, which is the whole input of the recorded turn-3 request. The
// stateless request ask builds instead carries the full history, no
// previous_response_id and store:false.
func TestStatefulChain(t *testing.T) {
	p := New()
	turn, err := p.ParseResponse(providertest.Read(t, "pydantic-previous-response-id-turn2.json"))
	if err != nil {
		t.Fatal(err)
	}
	rec := recorded(t, "pydantic-previous-response-id-turn3.request.json")
	results := trailingResults(rec)
	if len(results) != 1 || len(turn.Calls) != 1 || results[0].ID != turn.Calls[0].ID {
		t.Fatalf("turn-3 results %+v do not answer the turn-2 calls %+v", results, turn.Calls)
	}
	// pydantic-ai sent a retry prompt as a plain output, not a failure.
	outputs, err := p.FormatToolResults(results)
	if err != nil {
		t.Fatal(err)
	}
	providertest.SameJSON(t, "function_call_output", outputs[0], []byte(rec.Get("input.0").Raw))

	body, _ := rebuild(t, "pydantic-previous-response-id-turn2.request.json", "pydantic-previous-response-id-turn2.json", "pydantic-previous-response-id-turn3.request.json")
	input := gjson.GetBytes(body, "input").Array()
	providertest.SameJSON(t, "last input item", []byte(input[len(input)-1].Raw), []byte(rec.Get("input.0").Raw))
	if gjson.GetBytes(body, "previous_response_id").Exists() || gjson.GetBytes(body, "store").Bool() {
		t.Errorf("stateless request uses server state: %s", body)
	}
	if len(input) != 3 {
		t.Errorf("stateless input has %d items, want question, call, output", len(input))
	}
	checkReplay(t, body)
	if err := validateCreateResponse(t, body); err != nil {
		t.Errorf("rebuilt request is not a valid CreateResponse: %v", err)
	}
}
