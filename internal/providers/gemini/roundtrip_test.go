package gemini

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

// followUps are the recorded second requests, each with the request and the
// reply of the turn before it.
var followUps = []struct {
	name                   string
	prevRequest, prevReply string
	nextRequest            string
}{
	{"fantasy-25flash-tool", "fantasy-25flash-tool.request.json", "fantasy-25flash-tool.json", "fantasy-25flash-tool-turn2.request.json"},
	{"fantasy-3pro-multi-tool", "fantasy-3pro-multi-tool.request.json", "fantasy-3pro-multi-tool.json", "fantasy-3pro-multi-tool-turn2.request.json"},
	{"fantasy-3pro-multi-tool-stream", "fantasy-3pro-multi-tool-stream.request.json", "fantasy-3pro-multi-tool-stream.sse", "fantasy-3pro-multi-tool-stream-turn2.request.json"},
	{"llm-gemini-3flash-thought-signatures", "llm-gemini-3flash-thought-signatures.request.json", "llm-gemini-3flash-thought-signatures.stream-array.json", "llm-gemini-3flash-thought-signatures-turn2.request.json"},
}

// rebuilt is a follow-up request rebuilt from the turn before it.
type rebuilt struct {
	body      []byte
	reply     []byte
	turn      *providers.Turn
	results   []providers.ToolResult
	formatted []json.RawMessage // FormatToolResults' output
	prevLen   int               // contents of the earlier request
}

// rebuildFollowUp renders the next request as the loop would: the earlier
// request's settings and contents, the reply's Turn.Messages, then the tool
// results that the recorded follow-up sent, through FormatToolResults.
func rebuildFollowUp(t *testing.T, prevReq, reply, nextReq []byte) rebuilt {
	t.Helper()
	p := New()
	turn, err := providers.ParseBody(p, reply)
	if err != nil {
		t.Fatalf("parse reply: %v", err)
	}
	results := recordedResults(t, nextReq, turn.Calls)
	formatted, err := p.FormatToolResults(results)
	if err != nil {
		t.Fatalf("FormatToolResults: %v", err)
	}

	prev := gjson.ParseBytes(prevReq)
	var messages []json.RawMessage
	for _, m := range prev.Get("contents").Array() {
		messages = append(messages, json.RawMessage(m.Raw))
	}
	prevLen := len(messages)
	messages = append(messages, turn.Messages...)
	messages = append(messages, formatted...)

	var tools []providers.Tool
	for _, d := range prev.Get("tools.0.functionDeclarations").Array() {
		params := d.Get("parameters")
		if !params.Exists() {
			params = d.Get("parameters_json_schema")
		}
		tools = append(tools, providers.Tool{
			Name:        d.Get("name").String(),
			Description: d.Get("description").String(),
			Parameters:  json.RawMessage(params.Raw),
		})
	}
	var system strings.Builder
	for _, part := range prev.Get("systemInstruction.parts").Array() {
		system.WriteString(part.Get("text").String())
	}
	body, err := p.BuildRequest(providers.Request{
		Model:     "m",
		System:    system.String(),
		Messages:  messages,
		Tools:     tools,
		MaxTokens: int(prev.Get("generationConfig.maxOutputTokens").Int()),
	})
	if err != nil {
		t.Fatalf("BuildRequest: %v", err)
	}
	return rebuilt{body, reply, turn, results, formatted, prevLen}
}

// functionResponse reads a recorded part's functionResponse, in either key
// spelling.
func functionResponse(part gjson.Result) gjson.Result {
	if fr := part.Get("functionResponse"); fr.Exists() {
		return fr
	}
	return part.Get("function_response")
}

// recordedResults reads the functionResponse parts of the follow-up's last
// content back into standardized results. A result answers the call of the
// same position, the pairing Gemini itself uses; its name must match.
func recordedResults(t *testing.T, nextReq []byte, calls []providers.ToolCall) []providers.ToolResult {
	t.Helper()
	last := gjson.GetBytes(nextReq, "contents.@reverse.0")
	var results []providers.ToolResult
	for _, part := range last.Get("parts").Array() {
		fr := functionResponse(part)
		if !fr.Exists() {
			continue
		}
		i := len(results)
		if i >= len(calls) || calls[i].Name != fr.Get("name").String() {
			t.Fatalf("recorded response %d names %q, which is not the call of that position", i, fr.Get("name").String())
		}
		resp := fr.Get("response")
		value, isErr := resp.Get("output"), false
		if !value.Exists() {
			value = resp.Get("result")
		}
		if e := resp.Get("error"); e.Exists() {
			value, isErr = e, true
		}
		results = append(results, providers.ToolResult{ID: calls[i].ID, Name: calls[i].Name, Content: value.String(), IsError: isErr})
	}
	if len(results) == 0 {
		t.Fatal("the follow-up request holds no function responses")
	}
	return results
}

// normalize removes what clients legitimately render differently, so that a
// rebuilt request and a recorded one can be compared in meaning:
//   - toolConfig (mode AUTO, the API's default), safetySettings and the
//     systemInstruction's role: settings ask does not send;
//   - snake_case part keys (function_call), which the API accepts as well
//     as camelCase, become camelCase;
//   - an empty text part without a signature, which adds nothing (one
//     client put one before the call it echoed);
//   - ids the model never sent: fantasy invented "1" for a Gemini 2.5 call,
//     ask sends none and lets Gemini pair by order;
//   - a functionResponse's {"result": X}, which Gemini reads as it reads
//     {"output": X}, the key ask uses;
//   - a tool's parameters_json_schema, its empty description and the case
//     of schema types (the recorded tool schemas use only keywords both
//     forms share).
func normalize(t *testing.T, body []byte, modelIDs map[string]bool) []byte {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("request is not a JSON object: %v", err)
	}
	delete(req, "toolConfig")
	delete(req, "safetySettings")
	if si, ok := req["systemInstruction"].(map[string]any); ok {
		delete(si, "role")
	}
	contents, _ := req["contents"].([]any)
	for _, c := range contents {
		content := c.(map[string]any)
		var parts []any
		for _, p := range content["parts"].([]any) {
			part := p.(map[string]any)
			for snake, camel := range map[string]string{"function_call": "functionCall", "function_response": "functionResponse"} {
				if v, ok := part[snake]; ok {
					part[camel] = v
					delete(part, snake)
				}
			}
			if text, ok := part["text"]; ok && text == "" && len(part) == 1 {
				continue
			}
			for _, key := range []string{"functionCall", "functionResponse"} {
				if fc, ok := part[key].(map[string]any); ok {
					if id, _ := fc["id"].(string); !modelIDs[id] {
						delete(fc, "id")
					}
				}
			}
			if fr, ok := part["functionResponse"].(map[string]any); ok {
				if resp, ok := fr["response"].(map[string]any); ok {
					if v, ok := resp["result"]; ok {
						resp["output"] = v
						delete(resp, "result")
					}
				}
			}
			parts = append(parts, part)
		}
		content["parts"] = parts
	}
	tools, _ := req["tools"].([]any)
	for _, tl := range tools {
		decls, _ := tl.(map[string]any)["functionDeclarations"].([]any)
		for _, d := range decls {
			decl := d.(map[string]any)
			if v, ok := decl["parameters_json_schema"]; ok {
				decl["parameters"] = v
				delete(decl, "parameters_json_schema")
			}
			if decl["description"] == "" {
				delete(decl, "description")
			}
			upperTypes(decl["parameters"])
		}
	}
	return providertest.Marshal(t, req)
}

func upperTypes(v any) {
	switch s := v.(type) {
	case map[string]any:
		for k, sub := range s {
			if name, ok := sub.(string); ok && k == "type" {
				s[k] = strings.ToUpper(name)
				continue
			}
			upperTypes(sub)
		}
	case []any:
		for _, sub := range s {
			upperTypes(sub)
		}
	}
}

func modelIDs(calls []providers.ToolCall) map[string]bool {
	ids := map[string]bool{}
	for _, c := range calls {
		if !isGeneratedID(c.ID) {
			ids[c.ID] = true
		}
	}
	return ids
}

// TestRebuildFollowUps rebuilds every recorded follow-up request and
// compares it in meaning with what was sent.
func TestRebuildFollowUps(t *testing.T) {
	for _, tt := range followUps {
		t.Run(tt.name, func(t *testing.T) {
			next := providertest.Read(t, tt.nextRequest)
			r := rebuildFollowUp(t, providertest.Read(t, tt.prevRequest), providertest.Read(t, tt.prevReply), next)
			ids := modelIDs(r.turn.Calls)
			providertest.SameJSON(t, "request", normalize(t, r.body, ids), normalize(t, next, ids))

			// The results of one step are ONE user content, placed last,
			// answering every call in order.
			if len(r.formatted) != 1 {
				t.Fatalf("FormatToolResults gave %d contents, want 1", len(r.formatted))
			}
			contents := gjson.GetBytes(r.body, "contents").Array()
			if len(contents) != r.prevLen+2 {
				t.Fatalf("%d contents, want the earlier %d, the model's and the results", len(contents), r.prevLen)
			}
			last := contents[len(contents)-1]
			if got := last.Get("role").String(); got != "user" {
				t.Errorf("last content role = %q, want user", got)
			}
			parts := last.Get("parts").Array()
			if len(parts) != len(r.turn.Calls) {
				t.Fatalf("last content holds %d parts for %d calls", len(parts), len(r.turn.Calls))
			}
			for i, c := range r.turn.Calls {
				fr := parts[i].Get("functionResponse")
				if fr.Get("name").String() != c.Name {
					t.Errorf("response %d names %q, call %d is %q", i, fr.Get("name").String(), i, c.Name)
				}
				if id := fr.Get("id"); isGeneratedID(c.ID) == id.Exists() || (id.Exists() && id.String() != c.ID) {
					t.Errorf("response %d id = %s for call id %q: want the model's id, or none for a generated one", i, id.Raw, c.ID)
				}
				if !fr.Get("response").IsObject() {
					t.Errorf("response %d is not an object: %s", i, fr.Get("response").Raw)
				}
			}
		})
	}
}

// TestFollowUpSignaturePlacement: in every rebuilt follow-up, the model
// content carries each thoughtSignature on the same part as the recorded
// follow-up did, with the same JSON text as the reply gave it, and no part
// gains one.
func TestFollowUpSignaturePlacement(t *testing.T) {
	for _, tt := range followUps {
		t.Run(tt.name, func(t *testing.T) {
			next := providertest.Read(t, tt.nextRequest)
			r := rebuildFollowUp(t, providertest.Read(t, tt.prevRequest), providertest.Read(t, tt.prevReply), next)
			got := signedParts(gjson.GetBytes(r.body, "contents").Array()[r.prevLen])
			want := signedParts(gjson.GetBytes(next, "contents").Array()[r.prevLen])
			if len(want) == 0 || strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("signed parts differ\n got %q\nwant %q", got, want)
			}
			// Byte for byte: the signature's JSON text in the request is the
			// reply's.
			if !strings.Contains(string(r.reply), want[0][strings.Index(want[0], "=")+1:]) {
				t.Errorf("the recorded signature is not in the reply")
			}
		})
	}
}

// signedParts describes a model content's non-empty parts as
// "index:kind=signature", the signature as raw JSON text ("" if none).
func signedParts(content gjson.Result) []string {
	var out []string
	i := 0
	for _, p := range content.Get("parts").Array() {
		kind := "text"
		if fc := p.Get("functionCall"); fc.Exists() {
			kind = "call:" + fc.Get("name").String()
		} else if fc := p.Get("function_call"); fc.Exists() {
			kind = "call:" + fc.Get("name").String()
		} else if p.Get("text").String() == "" && !p.Get("thoughtSignature").Exists() {
			continue // an empty unsigned text part adds nothing
		}
		out = append(out, string(rune('0'+i))+":"+kind+"="+p.Get("thoughtSignature").Raw)
		i++
	}
	return out
}

// TestParallelCallsOnlyFirstSigned: of the recorded parallel calls, only
// the first carries a signature, and the echo keeps it that way.
func TestParallelCallsOnlyFirstSigned(t *testing.T) {
	for _, name := range []string{"fantasy-25pro-multi-tool.json", "fantasy-3pro-multi-tool.json", "pydantic-three-parallel-calls.json", "fantasy-3pro-multi-tool-stream.sse"} {
		turn, err := providers.ParseBody(New(), providertest.Read(t, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		parts := gjson.GetBytes(turn.Messages[0], "parts").Array()
		if len(parts) < 2 {
			t.Fatalf("%s: %d parts, want parallel calls", name, len(parts))
		}
		for i, p := range parts {
			if p.Get("thoughtSignature").Exists() != (i == 0) {
				t.Errorf("%s: part %d signed = %v", name, i, !(i == 0))
			}
		}
	}
}

// TestMessagesRoundTripThroughBuildRequest: what ParseResponse returns is
// valid history for BuildRequest, unchanged.
func TestMessagesRoundTripThroughBuildRequest(t *testing.T) {
	body := providertest.Read(t, "fantasy-3pro-multi-tool.json")
	turn, err := New().ParseResponse(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := New().BuildRequest(providers.Request{Model: "m", Messages: turn.Messages})
	if err != nil {
		t.Fatal(err)
	}
	providertest.SameBytes(t, "echoed content", []byte(gjson.GetBytes(req, "contents.0").Raw), []byte(gjson.GetBytes(body, "candidates.0.content").Raw))
}
