package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

const conformanceSchema = `{"type":"object","properties":{
	"name":{"type":"string","description":"User name","default":"John Doe"},
	"age":{"type":"integer","description":"User age","default":30},
	"score":{"type":"number","description":"User score","default":95.5},
	"status":{"type":"string","enum":["active","inactive","pending"],"default":"active"},
	"verified":{"type":"boolean","default":true},
	"nick":{"type":"string"},
	"email":{"type":"string","title":"E-mail"}},
	"required":["email"]}`

// answers is a person at the terminal who types the given lines in turn;
// asked keeps the questions.
type answers struct {
	lines []string
	asked []string
}

func (a *answers) ask(_ context.Context, q string) (string, error) {
	a.asked = append(a.asked, q)
	if len(a.lines) == 0 {
		return "", errors.New("no more answers")
	}
	l := a.lines[0]
	a.lines = a.lines[1:]
	return l, nil
}

func elicitParams(t *testing.T, message, schema string) *sdk.ElicitParams {
	t.Helper()
	var s any
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	return &sdk.ElicitParams{Message: message, RequestedSchema: s}
}

// At a terminal each field is asked in turn; Enter takes the default,
// which SEP-1034 has the client fill in; a wrong answer is asked again;
// a required field cannot be skipped; y sends.
func TestElicitAtATerminal(t *testing.T) {
	t.Parallel()
	// age, email, name, nick, score, status, verified
	a := &answers{lines: []string{"", "", "me@example.com", "", "", "nine", "99", "frozen", "inactive", "no", "y"}}
	res, err := elicit(context.Background(), "srv", elicitParams(t, "Who are you?", conformanceSchema), a.ask)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"age": int64(30), "email": "me@example.com", "name": "John Doe", "score": float64(99),
		"status": "inactive", "verified": false}
	if res.Action != "accept" || !reflect.DeepEqual(res.Content, want) {
		t.Errorf("result = %s %#v, want accept %#v", res.Action, res.Content, want)
	}
	joined := strings.Join(a.asked, "")
	for _, s := range []string{"MCP server srv asks: Who are you?", "email (E-mail)", "email is required", "type a number",
		"choose active, inactive, pending", "[John Doe]", "[leave empty to skip]", "Send this to srv?"} {
		if !strings.Contains(joined, s) {
			t.Errorf("the questions lack %q:\n%s", s, joined)
		}
	}
}

// Without a terminal, or when the person says no, nothing is sent; a
// server's request to open a URL is declined.
func TestElicitDeclines(t *testing.T) {
	t.Parallel()
	p := elicitParams(t, "hi", conformanceSchema)
	if res, _ := elicit(context.Background(), "srv", p, nil); res.Action != "decline" || res.Content != nil {
		t.Errorf("no terminal: %+v", res)
	}
	a := &answers{lines: []string{"", "x@y", "", "", "", "", "", "n"}}
	if res, _ := elicit(context.Background(), "srv", p, a.ask); res.Action != "decline" || res.Content != nil {
		t.Errorf("answered no: %+v", res)
	}
	a = &answers{lines: []string{"y"}}
	url := &sdk.ElicitParams{Mode: "url", Message: "open this", URL: "https://example.com"}
	if res, _ := elicit(context.Background(), "srv", url, a.ask); res.Action != "decline" || len(a.asked) != 0 {
		t.Errorf("url mode: %+v, asked %q", res, a.asked)
	}
	a = &answers{}
	if res, _ := elicit(context.Background(), "srv", p, a.ask); res.Action != "cancel" {
		t.Errorf("the terminal went away: %+v", res)
	}
}

// What a server writes is escaped before it reaches the terminal: no
// escape sequence, control character or bidi override gets through.
func TestElicitEscapes(t *testing.T) {
	t.Parallel()
	evil := "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J\u202eevil\u009b31m"
	schema := `{"type":"object","properties":{"f\u001b[31m":{"type":"string","description":"` + strings.ReplaceAll(strings.ReplaceAll(evil, `\`, `\\`), "\x1b", `\u001b`) + `"}}}`
	schema = strings.ReplaceAll(schema, "\x07", `\u0007`)
	a := &answers{lines: []string{"", "n"}}
	elicit(context.Background(), "srv\x1b[1m", elicitParams(t, evil, schema), a.ask)
	for _, q := range a.asked {
		if dangerous(q) {
			t.Errorf("a question carries a control: %q", q)
		}
	}
	if len(a.asked) != 2 {
		t.Errorf("asked %q", a.asked)
	}
}

func dangerous(s string) bool {
	for _, r := range s {
		if r == '\n' {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
			return true
		}
	}
	return !utf8.ValidString(s)
}

func TestFormFieldsRefusesWhatAFormCannotHold(t *testing.T) {
	t.Parallel()
	for _, schema := range []string{
		`{"type":"array"}`,
		`{"type":"object","properties":{"a":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"array"}}}`,
	} {
		var s any
		json.Unmarshal([]byte(schema), &s)
		if _, err := formFields(s); err == nil {
			t.Errorf("formFields(%s) took it", schema)
		}
	}
}

// FuzzElicit feeds any schema, message and answers to the form: it never
// panics, what it asks is escaped, and what it accepts holds only the
// schema's fields, each of its type.
func FuzzElicit(f *testing.F) {
	f.Add(conformanceSchema, "hi", "\n\nx\n\n\n\n\ny")
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","default":"7"}}}`, "\x1b[2J", "1e3\ny")
	f.Add(`{"properties":{"b":{"type":"boolean","default":"yes"}}}`, "\u202e", "maybe\ntrue\ny")
	f.Fuzz(func(t *testing.T, schema, message, typed string) {
		var s any
		if json.Unmarshal([]byte(schema), &s) != nil {
			return
		}
		fields, ferr := formFields(s)
		a := &answers{lines: strings.Split(typed, "\n")}
		res, err := elicit(context.Background(), "srv", &sdk.ElicitParams{Message: message, RequestedSchema: s}, a.ask)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range a.asked {
			if dangerous(q) {
				t.Fatalf("unescaped: %q", q)
			}
		}
		if res.Action != "accept" {
			return
		}
		if ferr != nil {
			t.Fatalf("accepted a form whose schema was refused: %v", ferr)
		}
		types := map[string]string{}
		for _, fl := range fields {
			types[fl.Name] = fl.Type
		}
		for k, v := range res.Content {
			var ok bool
			switch types[k] {
			case "string":
				_, ok = v.(string)
			case "integer":
				_, ok = v.(int64)
			case "number":
				_, ok = v.(float64)
			case "boolean":
				_, ok = v.(bool)
			}
			if !ok {
				t.Fatalf("field %q = %#v, not of its type %q", k, v, types[k])
			}
		}
	})
}
