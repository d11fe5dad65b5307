package records

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/providers"
)

// TestEncodeFailures: what encoding/json refused, Marshal refuses.
func TestEncodeFailures(t *testing.T) {
	t.Parallel()
	nan, inf := math.NaN(), math.Inf(-1)
	tests := []struct {
		name string
		ev   Event
		want string
	}{
		{"invalid body", Event{Type: TypeResponse, Body: json.RawMessage(`{"a":`)}, "body"},
		{"empty history entry", Event{Type: TypeRunFinished, History: []json.RawMessage{{}}}, "history"},
		{"empty tool parameters", Event{Type: TypeRunStarted, Settings: &Settings{UserTools: []providers.Tool{{Name: "t", Parameters: json.RawMessage{}}}}}, "tool t parameters"},
		{"year 10000", Event{Type: TypeRequest, Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}, "year"},
		{"NaN temperature", Event{Type: TypeRunStarted, Settings: &Settings{Temperature: &nan}}, "temperature"},
		{"infinite cost", Event{Type: TypeAssistant, Usage: &providers.Usage{Cost: &inf}}, "usage cost"},
	}
	for _, tt := range tests {
		if b, err := Marshal(tt.ev); err == nil {
			t.Errorf("%s: Marshal wrote %s, want an error", tt.name, b)
		}
	}
}

// oneRun is the events of a typical one-shot run that answers at once.
func oneRun() []Event {
	at := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	system := strings.Repeat("You are a careful assistant that uses tools. ", 40)
	body := json.RawMessage(`{"model":"m","messages":[{"role":"system","content":` + string(providers.Quote(system)) +
		`},{"role":"user","content":"say hello"}],"tools":[` + strings.Repeat(`{"type":"function","function":{"name":"read_file","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}},`, 6) +
		`{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}],"stream":false}`)
	temp, answer := 0.2, "Hello."
	usage := providers.Usage{InputTokens: 812, OutputTokens: 3, TotalTokens: 815}
	return []Event{
		{Type: TypeRunStarted, Time: at, Version: "1.4.0", Provider: "openai", Model: "m", Mode: "auto",
			Settings: &Settings{Prompt: "say hello", System: system, BaseURL: "http://127.0.0.1:18600/v1", Workdir: "/home/u/src",
				MaxSteps: 20, Timeout: "10m0s", Tools: []string{"read_file", "write_file", "edit_file", "list_dir", "search", "run_command", "now"},
				ToolProtocol: "auto", Temperature: &temp}},
		{Type: TypeRequest, Time: at, Step: 1, URL: "http://127.0.0.1:18600/v1/chat/completions",
			Headers: map[string]string{"Authorization": "[redacted]", "Content-Type": "application/json"}, Body: body},
		{Type: TypeResponse, Time: at, Step: 1, HTTPStatus: 200, Headers: map[string]string{"Content-Type": "application/json"},
			Body: json.RawMessage(`{"id":"c1","choices":[{"index":0,"message":{"role":"assistant","content":"Hello."},"finish_reason":"stop"}],"usage":{"prompt_tokens":812,"completion_tokens":3,"total_tokens":815}}`)},
		{Type: TypeAssistant, Time: at, Step: 1, Text: "Hello.", Usage: &usage},
		{Type: TypeRunFinished, Time: at, Status: "completed", Answer: &answer, Steps: 1,
			UsagePerStep: []StepUsage{{Step: 1, Usage: usage}},
			History:      []json.RawMessage{json.RawMessage(`{"role":"user","content":"say hello"}`), json.RawMessage(`{"role":"assistant","content":"Hello."}`)}},
	}
}

// TestOneRunReadsBack checks that every event of a run reads back as it
// was written.
func TestOneRunReadsBack(t *testing.T) {
	t.Parallel()
	var lines [][]byte
	var transcript bytes.Buffer
	for _, ev := range oneRun() {
		b, err := Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
		transcript.Write(append(b, '\n'))
	}
	got, err := Read(&transcript)
	if err != nil || len(got) != len(lines) {
		t.Fatalf("read back %d events, %v; want %d", len(got), err, len(lines))
	}
	for i, ev := range got {
		if again, _ := Marshal(ev); !bytes.Equal(again, lines[i]) {
			t.Errorf("read back and written again\n got %s\nwant %s", again, lines[i])
		}
	}
}

// BenchmarkOneRun writes a one-shot run's events. In one process
// encoding/json's encoders are built once and then cached, so the
// reflection's first-use cost, which each run of ask pays, does not show
// here.
func BenchmarkOneRun(b *testing.B) {
	events := oneRun()
	b.ReportAllocs()
	for b.Loop() {
		for _, ev := range events {
			if _, err := Marshal(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
}
