package records

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/providers"
)

func TestRecorderWritesWholeLinesConcurrently(t *testing.T) {
	var a, b bytes.Buffer
	rec := NewRecorder(&a, nil, &b)
	rec.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	var seen []string
	rec.Observe(func(ev Event) { seen = append(seen, ev.Type) })
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec.Emit(Event{Type: TypeToolFinished, Step: i, Content: strings.Repeat("x", 1000) + "<&>"})
		}()
	}
	wg.Wait()
	if a.String() != b.String() {
		t.Fatal("sinks received different bytes")
	}
	lines := strings.Split(strings.TrimSuffix(a.String(), "\n"), "\n")
	if len(lines) != 50 || len(seen) != 50 {
		t.Fatalf("got %d lines and %d observed events, want 50 each", len(lines), len(seen))
	}
	if !strings.Contains(lines[0], `"time":"2026-01-02T03:04:05Z"`) || !strings.Contains(lines[0], "<&>") {
		t.Errorf("line lacks the time or escapes HTML: %.200s", lines[0])
	}
}

func TestReadRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	rec := NewRecorder(&buf)
	answer := "done"
	rec.Emit(Event{Type: TypeRunStarted, Provider: "openai", Settings: &Settings{Prompt: "hi", MaxSteps: 8}})
	rec.Emit(Event{Type: TypeResponse, Step: 1, HTTPStatus: 200, Body: BodyJSON([]byte("data: {\"a\":1}\n\ndata: [DONE]\n\n"))})
	rec.Emit(Event{Type: TypeAssistant, Step: 1, ToolCalls: []providers.ToolCall{{ID: "c1", Name: "read_file", Arguments: `{"path":"a"}`}}})
	rec.Emit(Event{Type: TypeRunFinished, Status: "completed", Answer: &answer})
	events, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 4 || events[0].Settings.Prompt != "hi" || events[2].ToolCalls[0].Arguments != `{"path":"a"}` || *events[3].Answer != "done" {
		t.Errorf("round trip lost data: %+v", events)
	}
	if got := string(BodyBytes(events[1].Body)); got != "data: {\"a\":1}\n\ndata: [DONE]\n\n" {
		t.Errorf("stream body = %q", got)
	}
}

// TestSettingsCarriedOver checks the JSON names of the settings that
// --continue reads back, and that they survive a round trip.
func TestSettingsCarriedOver(t *testing.T) {
	set := Settings{Prompt: "hi", BaseURL: "http://127.0.0.1:9/v1", ToolProtocol: "json", Safe: true,
		ToolsFile: "/p/tools.json", MCP: []string{"srv --a", "X=1 other"}, Tools: []string{"read_file"}}
	line, err := Marshal(Event{Type: TypeRunStarted, Settings: &set})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"base_url":"http://127.0.0.1:9/v1"`, `"tool_protocol":"json"`, `"safe":true`,
		`"tools_file":"/p/tools.json"`, `"mcp":["srv --a","X=1 other"]`} {
		if !bytes.Contains(line, []byte(want)) {
			t.Errorf("run.started lacks %s: %s", want, line)
		}
	}
	events, err := Read(bytes.NewReader(line))
	if err != nil {
		t.Fatal(err)
	}
	got := events[0].Settings
	if got.ToolProtocol != "json" || !got.Safe || got.ToolsFile != set.ToolsFile || strings.Join(got.MCP, "|") != "srv --a|X=1 other" {
		t.Errorf("read back %+v", got)
	}
	// A run without them writes none of them: older readers see nothing new.
	plain, _ := Marshal(Event{Type: TypeRunStarted, Settings: &Settings{Prompt: "hi"}})
	for _, key := range []string{"tool_protocol", "safe", "tools_file", "mcp"} {
		if bytes.Contains(plain, []byte(`"`+key+`"`)) {
			t.Errorf("an unset %s is written: %s", key, plain)
		}
	}
}

func TestReadErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "does not start with a run.started"},
		{"bad line", "{\"type\":\"run.started\"}\n{oops\n", "transcript line 2"},
		{"no type", "{\"type\":\"run.started\"}\n{\"step\":1}\n", "line 2: event has no type"},
		{"wrong first", "{\"type\":\"request\"}\n", "does not start"},
	}
	for _, tt := range tests {
		_, err := Read(strings.NewReader(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
}

func TestBodyJSON(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": 1}`, `{"a": 1}`},
		{"data: x\n\n", `"data: x\n\n"`},
		{"<html>", `"<html>"`},
		{`{"cut":`, `"{\"cut\":"`},
	}
	for _, tt := range tests {
		got := BodyJSON([]byte(tt.in))
		if string(got) != tt.want {
			t.Errorf("BodyJSON(%q) = %s, want %s", tt.in, got, tt.want)
		}
		if back := string(BodyBytes(got)); back != tt.in {
			t.Errorf("BodyBytes(BodyJSON(%q)) = %q", tt.in, back)
		}
	}
}

func TestDiffJSON(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []string
	}{
		{"same in meaning", `{"a":1,"b":[1,2]}`, `{"b":[1,2], "a":1}`, nil},
		{"changed value", `{"m":[{"c":"x"}]}`, `{"m":[{"c":"y"}]}`, []string{`m[0].c: recorded "x", rebuilt "y"`}},
		{"missing and extra", `{"a":1}`, `{"b":2}`, []string{"a: recorded 1, not rebuilt", "b: not recorded, rebuilt 2"}},
		{"longer array", `[1]`, `[1,2]`, []string{"[1]: not recorded, rebuilt 2"}},
		{"type change", `{"a":1}`, `{"a":"1"}`, []string{`a: recorded 1, rebuilt "1"`}},
	}
	for _, tt := range tests {
		got := DiffJSON([]byte(tt.a), []byte(tt.b), 10)
		if strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("%s: DiffJSON = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestToolFinishedFields: tool.finished always has content, is_error and
// duration_ms (DESIGN §6), other events leave them out, and a transcript
// written before duration_ms existed still reads.
func TestToolFinishedFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		ev   Event
		want string
	}{
		{Event{Type: TypeToolFinished, Step: 1, ID: "c1", Name: "now"},
			`{"type":"tool.finished","time":"0001-01-01T00:00:00Z","step":1,"id":"c1","name":"now","content":"","is_error":false,"duration_ms":0}`},
		{Event{Type: TypeToolFinished, ID: "c2", Name: "run_command", Content: "a <b> & c", IsError: true, DurationMS: 1500},
			`{"type":"tool.finished","time":"0001-01-01T00:00:00Z","id":"c2","name":"run_command","content":"a <b> & c","is_error":true,"duration_ms":1500}`},
		{Event{Type: TypeToolStarted, ID: "c1", Name: "now", Arguments: "{}"},
			`{"type":"tool.started","time":"0001-01-01T00:00:00Z","id":"c1","name":"now","arguments":"{}"}`},
	}
	for _, tt := range tests {
		got, err := Marshal(tt.ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("Marshal(%s)\n got %s\nwant %s", tt.ev.Type, got, tt.want)
		}
		// json.Marshal of an event, as when one is part of something else,
		// writes the same members (escaping <, > and &).
		viaJSON, err := json.Marshal(tt.ev)
		var a, b map[string]any
		if err != nil || json.Unmarshal(viaJSON, &a) != nil || json.Unmarshal(got, &b) != nil || !reflect.DeepEqual(a, b) {
			t.Errorf("json.Marshal(%s) = %s, %v; want %s", tt.ev.Type, viaJSON, err, got)
		}
	}
	old := `{"type":"run.started","time":"2026-01-02T03:04:05Z","provider":"openai"}` + "\n" +
		`{"type":"tool.finished","time":"2026-01-02T03:04:05Z","step":1,"id":"c1","name":"now","content":"12:00"}` + "\n"
	events, err := Read(strings.NewReader(old))
	if err != nil || len(events) != 2 || events[1].Content != "12:00" || events[1].IsError || events[1].DurationMS != 0 {
		t.Errorf("Read(older tool.finished) = %+v, %v", events, err)
	}
}
