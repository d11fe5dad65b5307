package records

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/providers"
)

// refEvent and refFinished are how events were written through
// encoding/json before appendEvent: the reference its bytes must equal.
type refEvent Event

type refFinished struct {
	refEvent
	Content    string `json:"content"`
	IsError    bool   `json:"is_error"`
	DurationMS int64  `json:"duration_ms"`
}

func refMarshal(ev Event) ([]byte, error) {
	var v any = refEvent(ev)
	if ev.Type == TypeToolFinished {
		v = refFinished{refEvent(ev), ev.Content, ev.IsError, ev.DurationMS}
	}
	return providers.MarshalNoEscape(v)
}

// sameAsReference fails t unless Marshal and refMarshal write the same
// bytes, or both fail.
func sameAsReference(t *testing.T, ev Event) {
	t.Helper()
	got, err := Marshal(ev)
	want, refErr := refMarshal(ev)
	switch {
	case err != nil && refErr != nil:
	case err != nil || refErr != nil:
		t.Fatalf("Marshal err = %v, encoding/json err = %v\n got %s\nwant %s", err, refErr, got, want)
	case !bytes.Equal(got, want):
		t.Fatalf("Marshal differs from encoding/json\n got %s\nwant %s", got, want)
	}
}

// FuzzEventJSON builds events from arbitrary strings, numbers, raw JSON
// (valid or not), times and nil or empty slices, maps and pointers.
func FuzzEventJSON(f *testing.F) {
	f.Add(uint8(0), "hi <&> \u2028\u2029", "\xff\xfe a\x00\x01\b\f\n\r\t\x1f\x7f\"\\", "é 🙂", []byte(`{ "a" : [1, 2.50, "x\u2028"] }`), int64(1767323045), 123456789, 0.7, uint32(0xffffff))
	f.Add(uint8(6), "", "", "", []byte(`{`), int64(-1), -5, 1e21, uint32(0x555555))
	f.Add(uint8(10), "x", "y", "z", []byte(``), int64(1<<40), 1<<40, 1e-7, uint32(0xaaaaaa))
	f.Add(uint8(3), "a", "b", "c", []byte(" \"str\" "), int64(0), 0, -0.0, uint32(0x0f0f0f))
	f.Add(uint8(11), "custom", "\u00e9", "\t", []byte("null"), int64(253402300800), 3599*25, 5e-324, uint32(0x1f0f0f0))
	f.Fuzz(func(t *testing.T, kind uint8, s1, s2, s3 string, raw []byte, sec int64, n int, fl float64, bits uint32) {
		bit := func(i int) bool { return bits&(1<<i) != 0 }
		types := []string{TypeRunStarted, TypeRequest, TypeResponse, TypeRetry, TypeAssistant, TypeToolStarted,
			TypeToolFinished, TypeToolDenied, TypeFileChanged, TypeError, TypeRunFinished}
		ev := Event{Type: s1}
		if int(kind) < len(types) {
			ev.Type = types[kind]
		}
		// A year outside 0-9999 or a zone of 24 hours or more makes both
		// fail; most inputs give a time that can be written.
		switch {
		case bit(0) && bit(24):
			ev.Time = time.Unix(sec, int64(n)).In(time.FixedZone(s3, n%(100*3600)))
		case bit(0):
			ev.Time = time.Unix(sec%(1<<36), int64(n)).In(time.FixedZone(s3, n%(24*3600)))
		default:
			ev.Time = time.Date(2026, 1, 2, 3, 4, 5, n%1e9, time.UTC)
		}
		ev.Step, ev.HTTPStatus, ev.Attempt, ev.Steps, ev.ToolCount, ev.ExitCode = n, -n, n/2, n, int(sec), int(kind)
		ev.DurationMS, ev.DelayMS = sec, int64(n)
		ev.Version, ev.Provider, ev.Model, ev.Mode, ev.URL = s1, s2, s3, s1, s2
		ev.Text, ev.ID, ev.Name, ev.Arguments, ev.Content, ev.Reason, ev.Error, ev.Status = s2, s3, s1, s2, s3, s1, s2, s3
		ev.IsError = bit(1)
		if bit(2) {
			ev.Body = raw
		}
		if bit(3) {
			ev.Headers = map[string]string{s1: s2, s2: s3, s3: s1}
		} else if bit(4) {
			ev.Headers = map[string]string{}
		}
		cost := fl
		if bit(5) {
			ev.Usage = &providers.Usage{InputTokens: n, OutputTokens: -n, CacheReadTokens: int(sec), TotalTokens: n * 3}
			if bit(6) {
				ev.Usage.Cost = &cost
			}
		}
		if bit(7) {
			ev.ToolCalls = []providers.ToolCall{{ID: s1, Name: s2, Arguments: s3, Unreadable: s1}, {}}
		} else if bit(8) {
			ev.ToolCalls = []providers.ToolCall{}
		}
		added, removed := n, -n
		if bit(9) {
			ev.Change = &Change{Path: s1, Action: s2, Tool: s3}
			if bit(10) {
				ev.LinesAdded, ev.LinesRemoved = &added, &removed
			}
		}
		if bit(11) {
			ev.Answer = &s2
		}
		if bit(12) {
			ev.Denials = []Denial{{ID: s1, Name: s2, Reason: s3}}
			ev.Changes = []Change{{Path: s3, LinesRemoved: &removed}, {}}
			ev.UsagePerStep = []StepUsage{{Step: n, Usage: providers.Usage{ReasoningTokens: n, Cost: &cost}}, {}}
		} else if bit(13) {
			ev.Denials, ev.Changes, ev.UsagePerStep = []Denial{}, []Change{}, []StepUsage{}
		}
		if bit(14) {
			ev.History = []json.RawMessage{raw, nil}
		} else if bit(15) {
			ev.History = []json.RawMessage{json.RawMessage(`{"role":"user"}`)}
		}
		if bit(16) {
			temp := -fl
			ev.Settings = &Settings{Prompt: s1, System: s2, ProjectFile: s3, BaseURL: s1, Workdir: s2,
				MaxSteps: n, Timeout: s3, Stream: bit(17), ToolProtocol: s1, Safe: bit(18), ToolsFile: s2,
				Reasoning: s3, NoCache: bit(19), MaxTokens: int(sec)}
			if bit(20) {
				ev.Settings.Tools = []string{s1, s2}
				ev.Settings.MCP = []string{s3}
				ev.Settings.Temperature = &temp
			} else if bit(21) {
				ev.Settings.Tools, ev.Settings.MCP = []string{}, []string{}
			}
			if bit(22) {
				ev.Settings.Attachments = []providers.Attachment{{Name: s1, MIME: s2, Data: []byte(s3)}, {}}
				ev.Settings.UserTools = []providers.Tool{{Name: s1, Description: s2, Parameters: raw}, {}}
			}
			if bit(23) {
				ev.Settings.Schema = raw
				ev.Settings.History = []json.RawMessage{raw}
			}
		}
		sameAsReference(t, ev)
	})
}

// TestEncodeEveryField fills every field of Event and of the types it holds
// and compares with encoding/json. A field added to any of them that
// appendEvent does not write makes it fail: fill it by hand there too.
func TestEncodeEveryField(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{TypeAssistant, TypeToolFinished} {
		for _, full := range []bool{true, false} {
			var ev Event
			fill(t, reflect.ValueOf(&ev).Elem(), "Event", full)
			ev.Type = typ
			t.Run(typ+map[bool]string{true: "/full", false: "/empty"}[full], func(t *testing.T) {
				sameAsReference(t, ev)
			})
		}
	}
}

// fill sets every exported field below v. When full, every value is
// non-zero; otherwise pointers and slices are there but hold zero values
// (one element each), maps are empty and raw JSON is nil, which is where
// encoding/json writes null, "" or [] rather than leaving a member out.
func fill(t *testing.T, v reflect.Value, path string, full bool) {
	t.Helper()
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 60700, time.FixedZone("", -(9*3600+30*60)))))
		return
	case reflect.TypeFor[json.RawMessage]():
		if full {
			v.SetBytes([]byte("{ \"k\" : [1, \"<&>\u2028\"],\n\t\"n\": null }"))
		}
		return
	}
	if !full && v.Kind() != reflect.Pointer && v.Kind() != reflect.Slice && v.Kind() != reflect.Map && v.Kind() != reflect.Struct {
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(path + " <&>\u2028\"\\\n\x01\b\f\r\t\x1f\x7f\xff é")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(-int64(len(path)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(len(path)))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5e-9 * float64(len(path)))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(t, v.Elem(), path, full)
	case reflect.Slice:
		n := 1
		if full {
			n = 2
		}
		v.Set(reflect.MakeSlice(v.Type(), n, n))
		for i := range n {
			fill(t, v.Index(i), path+"[]", full)
		}
	case reflect.Map:
		v.Set(reflect.MakeMap(v.Type()))
		if full {
			for _, k := range []string{"b-" + path, "a-" + path, "\u2029"} {
				key, val := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				fill(t, key, k, full)
				fill(t, val, k, full)
				v.SetMapIndex(key, val)
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				fill(t, v.Field(i), path+"."+f.Name, full)
			}
		}
	default:
		t.Fatalf("fill: %s is a %s, which the test cannot fill: teach fill (and appendEvent) about it", path, v.Type())
	}
}

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
		if _, err := refMarshal(tt.ev); err == nil {
			t.Fatalf("%s: encoding/json wrote it", tt.name)
		}
		if _, err := Marshal(tt.ev); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Marshal err = %v, want one mentioning %q", tt.name, err, tt.want)
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

func TestOneRunSameAsReference(t *testing.T) {
	t.Parallel()
	for _, ev := range oneRun() {
		sameAsReference(t, ev)
	}
}

// BenchmarkOneRun writes a one-shot run's events. In one process
// encoding/json's encoders are built once and then cached, so the
// reflection's first-use cost, which each run of ask pays, does not show
// here: this only says the steady state is no worse.
func BenchmarkOneRun(b *testing.B) {
	events := oneRun()
	for _, bm := range []struct {
		name    string
		marshal func(Event) ([]byte, error)
	}{{"encoding-json", refMarshal}, {"by-hand", Marshal}} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ev := range events {
					if _, err := bm.marshal(ev); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// FuzzAppendRaw holds appendRaw, which copies a compact value gjson finds
// valid, to json.Compact: the same bytes, and an error exactly where
// encoding/json has one.
func FuzzAppendRaw(f *testing.F) {
	for _, seed := range []string{
		`{"a":[1,2.5,"x y"],"b":{"c":null}}`, `{ "a" : 1 }`, `"a\"b"`, `"\\"`, `"a\\"x`, `"\u00e9\ud83d"`,
		"\"\xff\xfe\"", "\"a\tb\"", `[1,]`, `-`, `01`, `1.`, `1e`, `-0.0e+1`, `true`, `nul`, ``, ` `, `{}x`,
		`{"a":1}{}`, "\"\u2028<&>\"", strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, err := appendRaw([]byte("x"), "raw", raw)
		var want bytes.Buffer
		want.WriteString("x")
		wantErr := json.Compact(&want, raw)
		switch {
		case err != nil && wantErr != nil:
		case err != nil || wantErr != nil:
			t.Fatalf("appendRaw(%q) err = %v, json.Compact err = %v", raw, err, wantErr)
		case !bytes.Equal(got, want.Bytes()):
			t.Fatalf("appendRaw(%q) = %q, json.Compact gives %q", raw, got, want.Bytes())
		}
	})
}
