package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestRedactorHidesEverySpelling(t *testing.T) {
	const key = `fake-test-KEY"with/quote<&>`
	red := NewRedactor(key, "short")
	var u strings.Builder
	for i := 0; i < len(key); i++ {
		fmt.Fprintf(&u, `\u%04X`, key[i])
	}
	quote := func(s string) string { b, _ := json.Marshal(s); return string(b[1 : len(b)-1]) }
	forms := map[string]string{
		"raw":                   key,
		"JSON-escaped":          quote(key), // HTML-escaped too, as json.Marshal does
		"slash-escaped":         strings.ReplaceAll(quote(key), "/", `\/`),
		"u-escaped":             u.String(),
		"JSON-escaped in JSON":  quote(quote(key)),
		"u-escaped in JSON":     quote(u.String()),
		"u-escaped in JSON x2":  quote(quote(u.String())),
		"escaped in JSON twice": quote(quote(quote(key))),
	}
	for name, form := range forms {
		line := `{"before":"x","text":"` + form + `","after":"short"}`
		got := string(red.Redact([]byte(line)))
		if strings.Contains(got, "KEY") || strings.Contains(strings.ToLower(got), `u004b`) {
			t.Errorf("%s: %s", name, got)
		}
		if !strings.Contains(got, "[redacted]") || !strings.Contains(got, `"short"`) {
			t.Errorf("%s: %s, want the key replaced and the short secret left", name, got)
		}
	}
	if in := []byte("nothing here"); &red.Redact(in)[0] != &in[0] {
		t.Error("Redact copied text with nothing to hide")
	}
}

// A secret split across writes, as streamed text is, is still hidden.
func TestRedactWriterJoinsWrites(t *testing.T) {
	const key = "fake-test-key-0123456789"
	var out bytes.Buffer
	w := NewRedactor(key).Writer(&out)
	text := "the key is " + key + ", and fake- is not one"
	for i := 0; i < len(text); i += 5 {
		w.Write([]byte(text[i:min(i+5, len(text))]))
	}
	w.Flush()
	if got, want := out.String(), "the key is [redacted], and fake- is not one"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}

// jsonEscape, with its shortcut for plain strings, writes what
// encoding/json writes.
func TestJSONEscape(t *testing.T) {
	t.Parallel()
	inputs := []string{"", "sk-plain-KEY_0123", `a"b`, `a\b`, "a/b", "<&>", "tab\there", "é", "\u2028", "\xff", "~\x7f"}
	for c := 0; c < 256; c++ {
		inputs = append(inputs, "k"+string(rune(c)), "k"+string([]byte{byte(c)}))
	}
	for _, s := range inputs {
		for _, html := range []bool{false, true} {
			if got, want := jsonEscape(s, html), encodedJSON(s, html); got != want {
				t.Errorf("jsonEscape(%q, html %v) = %q, encoding/json writes %q", s, html, got, want)
			}
		}
	}
}

func FuzzJSONEscape(f *testing.F) {
	for _, s := range []string{"sk-KEY", `q"uote`, "<&>", "\xff\x00", "\u2029"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, html bool) {
		if got, want := jsonEscape(s, html), encodedJSON(s, html); got != want {
			t.Errorf("jsonEscape(%q, html %v) = %q, encoding/json writes %q", s, html, got, want)
		}
	})
}

func encodedJSON(s string, html bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s)
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// The \u forms of a secret are every byte's, in lower and upper case.
func TestSpellingsEscapeEveryByte(t *testing.T) {
	t.Parallel()
	key := "sk-\x00\xff/KEY"
	var lower, upper strings.Builder
	for i := 0; i < len(key); i++ {
		fmt.Fprintf(&lower, `\u%04x`, key[i])
		fmt.Fprintf(&upper, `\u%04X`, key[i])
	}
	got := spellings(key)
	for _, want := range []string{lower.String(), upper.String()} {
		if !slices.Contains(got, want) {
			t.Errorf("spellings(%q) lack %q", key, want)
		}
	}
}

// A secret's spellings are worked out once: the next redactor of the same
// key allocates only its own list, and hides the same forms.
func TestRedactorsShareSpellings(t *testing.T) {
	const key = "sk-shared-KEY-0123456789"
	first := NewRedactor(key)
	allocs := testing.AllocsPerRun(10, func() { NewRedactor(key) })
	if allocs > 12 {
		t.Errorf("a second redactor of the same key: %.0f allocations, want its own list only", allocs)
	}
	second := NewRedactor(key)
	if len(first.forms) != len(second.forms) || len(first.forms) < 3 {
		t.Errorf("%d forms, then %d", len(first.forms), len(second.forms))
	}
	for _, f := range spellings(key) {
		if got := string(second.Redact([]byte("x" + f + "x"))); got != "x[redacted]x" {
			t.Errorf("second redactor left %q: %q", f, got)
		}
	}
}
