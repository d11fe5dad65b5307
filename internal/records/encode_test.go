package records

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ask-cli/ask/internal/providers"
)

// byEncodingJSON is how events were written before Event had an encoder of
// its own: encoding/json over the struct's tags, with tool.finished's
// three members always present and last. MarshalJSON must write the same
// bytes.
func byEncodingJSON(ev Event) ([]byte, error) {
	type plain Event // without MarshalJSON
	var v any = plain(ev)
	if ev.Type == TypeToolFinished {
		v = struct {
			plain
			Content    string `json:"content"`
			IsError    bool   `json:"is_error"`
			DurationMS int64  `json:"duration_ms"`
		}{plain(ev), ev.Content, ev.IsError, ev.DurationMS}
	}
	return providers.MarshalNoEscape(v)
}

// TestMarshalAsEncodingJSON holds MarshalJSON to encoding/json's bytes
// for events whose every field, nested ones included, is filled at random
// or left zero: strings with what JSON escapes (quotes, control
// characters, U+2028, invalid UTF-8) and HTML characters, which stay
// unescaped; numbers, pointers, slices and maps present or not. A field
// the encoder forgot, or wrote out of place, differs here.
func TestMarshalAsEncodingJSON(t *testing.T) {
	t.Parallel()
	types := []string{TypeRunStarted, TypeRequest, TypeResponse, TypeAssistant, TypeToolStarted, TypeToolFinished,
		TypeFileChanged, TypeRunFinished, TypeError, ""}
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 39))
		var ev Event
		// Every other event fills every field it can: nothing left out.
		fill(reflect.ValueOf(&ev).Elem(), r, seed%2 == 0, 0)
		ev.Type = types[int(seed)%len(types)]
		got, gotErr := Marshal(ev)
		want, wantErr := byEncodingJSON(ev)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("seed %d: error %v, encoding/json's %v", seed, gotErr, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: wrote\n%s\nencoding/json writes\n%s", seed, got, want)
		}
	}
}

// TestSettingsAsEncodingJSON holds Settings.MarshalJSON to encoding/json's
// bytes, as TestMarshalAsEncodingJSON does the event's (whose settings it
// writes).
func TestSettingsAsEncodingJSON(t *testing.T) {
	t.Parallel()
	type plain Settings // without MarshalJSON
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 41))
		var s Settings
		fill(reflect.ValueOf(&s).Elem(), r, seed%2 == 0, 0)
		got, gotErr := s.MarshalJSON()
		want, wantErr := providers.MarshalNoEscape(plain(s))
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("seed %d: error %v, encoding/json's %v", seed, gotErr, wantErr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("seed %d: wrote\n%s\nencoding/json writes\n%s", seed, got, want)
		}
	}
}

// TestMarshalRecordedEvents: the events of a typical run, and of the demo's
// recorded session, are written as encoding/json writes them.
func TestMarshalRecordedEvents(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "demo", "testdata", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := Read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range append(oneRun(), recorded...) {
		got, err := Marshal(ev)
		want, wantErr := byEncodingJSON(ev)
		if err != nil || wantErr != nil || !bytes.Equal(got, want) {
			t.Errorf("%s event: wrote (%v)\n%s\nencoding/json writes (%v)\n%s", ev.Type, err, got, wantErr, want)
		}
	}
}

// fill sets v, and what it holds, to random values; all fills every
// field, otherwise about half stay zero.
func fill(v reflect.Value, r *rand.Rand, all bool, depth int) {
	if !v.CanSet() {
		return
	}
	if !all && r.IntN(2) == 0 {
		return
	}
	switch v.Type() {
	case reflect.TypeFor[time.Time]():
		v.Set(reflect.ValueOf(time.Unix(r.Int64N(4e9), r.Int64N(1e9)).UTC()))
		return
	case reflect.TypeFor[json.RawMessage]():
		docs := []string{`{"a":[1,2,{"b":"<&>"}]}`, ` [ true , null ] `, `"\u2028 x"`, `12.5e3`, "{\n \"k\": \"v\"\n}"}
		v.SetBytes([]byte(docs[r.IntN(len(docs))]))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomString(r))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(r.Int64N(2000) - 1000)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(r.Uint64N(250))
	case reflect.Float32, reflect.Float64:
		v.SetFloat([]float64{0, 1, -2.5, 1e-7, 3e21, 0.1 + 0.2}[r.IntN(6)] * float64(r.IntN(3)))
	case reflect.Pointer:
		if depth > 3 {
			return
		}
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), r, all, depth+1)
		v.Set(p)
	case reflect.Slice:
		if depth > 3 {
			return
		}
		n := r.IntN(3) + 1
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(s.Index(i), r, true, depth+1)
		}
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range r.IntN(3) + 1 {
			k := reflect.New(v.Type().Key()).Elem()
			e := reflect.New(v.Type().Elem()).Elem()
			fill(k, r, true, depth+1)
			fill(e, r, true, depth+1)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), r, all, depth)
		}
	}
}

// randomString is a short string of the kinds JSON and HTML treat apart.
func randomString(r *rand.Rand) string {
	parts := []string{"plain", `"quoted"`, `back\slash`, "<b>&amp;</b>", "line\nbreak\ttab", "\x00\x1f", "\u2028\u2029",
		"é ü 日本", "\xff\xfe invalid", "emoji 🙂", ""}
	var b strings.Builder
	for range r.IntN(3) + 1 {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}
