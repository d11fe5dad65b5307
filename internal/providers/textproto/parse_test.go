package textproto

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/providers/providertest"
)

func TestParseWithoutToolsIsText(t *testing.T) {
	res := Parse(`{"tool": "read_file", "parameters": {"path": "x"}}`+"\n\n\n\nbye", nil)
	if len(res.Calls) != 0 || len(res.Problems) != 0 || res.Text != "{\"tool\": \"read_file\", \"parameters\": {\"path\": \"x\"}}\n\nbye" {
		t.Errorf("Parse without tools = %+v", res)
	}
}

// Ids depend only on the reply and the call's position, so a replayed run
// rebuilds the same history.
func TestCallIDsAreStable(t *testing.T) {
	tools := testTools(t)
	reply := `{"tool": "list_directory", "parameters": {}} {"tool": "list_directory", "parameters": {"path": "a"}}`
	a, b := Parse(reply, tools), Parse(reply, tools)
	if len(a.Calls) != 2 || a.Calls[0].ID != b.Calls[0].ID || a.Calls[0].ID == a.Calls[1].ID {
		t.Errorf("ids %+v and %+v", a.Calls, b.Calls)
	}
	if a.Calls[0].ID != providers.GeneratedID([]byte(reply), 0) {
		t.Errorf("id %s is not GeneratedID(reply, 0)", a.Calls[0].ID)
	}
}

// The arguments are the model's own text when it wrote JSON.
func TestArgumentsKeepTheModelsText(t *testing.T) {
	res := Parse(`{"tool": "read_file", "parameters": { "path" : "go.mod" }}`, testTools(t))
	if len(res.Calls) != 1 || res.Calls[0].Arguments != `{ "path" : "go.mod" }` {
		t.Errorf("calls = %+v", res.Calls)
	}
}

func TestParseCases(t *testing.T) {
	tools := testTools(t)
	tests := []struct {
		name, reply string
		wantCalls   []string // name + " " + arguments
		wantProblem string   // substring of the joined problems
		wantText    string
	}{
		{name: "user tool with a rest parameter keeps quotes and spaces", reply: "```bash\nlookup  \"on call\"  rota\n```",
			wantCalls: []string{`lookup {"query":"\"on call\"  rota"}`}},
		{name: "option with equals", reply: "```bash\nsearch --path=cmd --glob='*.go' main\n```",
			wantCalls: []string{`search {"path":"cmd","glob":"*.go","pattern":"main"}`}},
		{name: "long option with dashes for underscores", reply: "```bash\nshell {\"command\": \"ls\", \"timeout_seconds\": 5}\n```",
			wantCalls: []string{`shell {"command": "ls", "timeout_seconds": 5}`}},
		{name: "double dash ends options", reply: "```bash\nsearch -- -v\n```",
			wantCalls: []string{`search {"pattern":"-v"}`}},
		{name: "negative number is a word", reply: "```bash\nweather Oslo -3\n```",
			wantCalls: []string{`weather {"city":"Oslo","days":-3}`}},
		{name: "line continuation", reply: "```bash\nsearch -g '*.go' \\\n  TODO internal\n```",
			wantCalls: []string{`search {"glob":"*.go","pattern":"TODO","path":"internal"}`}},
		{name: "unclosed quote", reply: "```bash\nread_file 'go.mod\n```", wantProblem: "quote is not closed"},
		{name: "option without value", reply: "```bash\nsearch TODO -g\n```", wantProblem: "option -g needs a value"},
		{name: "shell without a command", reply: "```bash\nshell\n```", wantProblem: `missing required parameter "command"`},
		{name: "write_file body and heredoc tabs", reply: "```bash\nwrite_file a.txt <<-EOF\n\tone\n\tEOF\n```",
			wantCalls: []string{`write_file {"path":"a.txt","content":"one\n"}`}},
		{name: "two heredoc calls in one block", reply: "```bash\nwrite_file a <<EOF\nx\nEOF\nwrite_file b <<EOF\ny\nEOF\n```",
			wantCalls: []string{`write_file {"path":"a","content":"x\n"}`, `write_file {"path":"b","content":"y\n"}`}},
		{name: "parameters as a JSON string", reply: `{"tool": "read_file", "parameters": "{\"path\": \"a\"}"}`,
			wantCalls: []string{`read_file {"path": "a"}`}},
		{name: "parameters not an object", reply: `{"tool": "read_file", "parameters": ["a"]}`, wantProblem: `"parameters" must be a JSON object`},
		{name: "tool not a string", reply: `{"tool": 3, "parameters": {}}`, wantProblem: `"tool" must be a string`},
		{name: "name form with unknown tool is data outside tags", reply: `{"name": "Bob", "arguments": 3}`,
			wantText: `{"name": "Bob", "arguments": 3}`},
		{name: "tool_call with an unreadable body", reply: "<tool_call>read_file go.mod</tool_call>", wantProblem: "<tool_call> must hold a JSON object"},
		{name: "tool_call with invalid JSON", reply: `<tool_call>{"name": "read_file", "arguments": {"path": }}</tool_call>`, wantProblem: "not valid JSON"},
		{name: "function with invalid JSON", reply: `<function=read_file>{"path": go.mod}</function>`, wantProblem: "not valid JSON"},
		{name: "function without body", reply: `<function=list_directory></function>`, wantCalls: []string{`list_directory {}`}},
		{name: "function with prose body", reply: `<function=read_file>please read go.mod</function>`, wantProblem: "<parameter=NAME>"},
		{name: "function parameter without closing tag", reply: "<function=search>\n<parameter=pattern>\nTODO\n<parameter=regex>\nfalse\n</function>",
			wantCalls: []string{`search {"pattern":"TODO","regex":false}`}},
		{name: "not a function tag", reply: "a <function=\nb", wantText: "a <function=\nb"},
		{name: "unclosed think stays text", reply: "<think> hm", wantText: "<think> hm"},
		{name: "calls inside think are not run", reply: `<think>{"tool": "shell", "parameters": {"command": "rm -rf /"}}</think>ok`, wantText: "ok"},
		{name: "tool fence", reply: "```tool_call\n{\"name\": \"list_directory\", \"arguments\": {}}\n```", wantCalls: []string{`list_directory {}`}},
		{name: "fence with a call and data keeps the data", reply: "```json\n{\"a\": 1}\n{\"tool\": \"list_directory\"}\n```",
			wantCalls: []string{`list_directory {}`}, wantText: "```json\n{\"a\": 1}\n\n```"},
		{name: "array of data", reply: `[{"a": 1}, {"b": 2}]`, wantText: `[{"a": 1}, {"b": 2}]`},
		{name: "array with a broken call", reply: `[{"tool": "nope"}]`, wantProblem: `unknown tool "nope"`},
		{name: "integer given as 2.0", reply: `{"tool": "read_file", "parameters": {"path": "a", "limit": 2.0}}`,
			wantCalls: []string{`read_file {"path": "a", "limit": 2.0}`}},
		{name: "null terminate", reply: `{"tool": "list_directory", "terminate": null}`, wantCalls: []string{`list_directory {}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Parse(tt.reply, tools)
			checkInvariants(t, res, tools)
			var got []string
			for _, c := range res.Calls {
				got = append(got, c.Name+" "+c.Arguments)
			}
			if !reflect.DeepEqual(got, tt.wantCalls) {
				t.Errorf("calls = %q, want %q (problems: %s)", got, tt.wantCalls, res.Error())
			}
			switch {
			case tt.wantProblem == "" && res.Error() != "":
				t.Errorf("unexpected problems: %s", res.Error())
			case !strings.Contains(res.Error(), tt.wantProblem):
				t.Errorf("problems %q lack %q", res.Error(), tt.wantProblem)
			}
			if tt.wantText != "" && res.Text != tt.wantText {
				t.Errorf("text = %q, want %q", res.Text, tt.wantText)
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`a b  c`, []string{"a", "b", "c"}},
		{`'a b' "c \"d\" \\ \n" e\ f`, []string{"a b", `c "d" \ \n`, "e f"}},
		{`x''y ""`, []string{"xy", ""}},
		{``, nil},
	}
	for _, tt := range tests {
		got, err := splitWords(tt.in)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("splitWords(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{`'a`, `"a`, `"a\"`} {
		if _, err := splitWords(bad); err == nil {
			t.Errorf("splitWords(%q) did not fail", bad)
		}
	}
}

func TestCoerce(t *testing.T) {
	tests := []struct {
		types []string
		in    string
		want  string // "" means an error
	}{
		{[]string{"integer"}, " 12 ", "12"},
		{[]string{"integer"}, "007", "7"},
		{[]string{"integer"}, "+5", "5"},
		{[]string{"integer"}, "1.5", ""},
		{[]string{"number"}, "1.50", "1.5"},
		{[]string{"boolean"}, "TRUE", "true"},
		{[]string{"boolean"}, "yes", ""},
		{[]string{"integer", "null"}, "null", "null"},
		{[]string{"array"}, `["a"]`, `["a"]`},
		{[]string{"object"}, `["a"]`, ""},
		{nil, `a"b`, `"a\"b"`},
		{[]string{"string", "integer"}, "7", `"7"`},
	}
	for _, tt := range tests {
		got, err := coerce("t", &param{name: "p", types: tt.types}, tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("coerce(%v, %q) = %s, want an error", tt.types, tt.in, got)
			}
			continue
		}
		if err != nil || string(got) != tt.want {
			t.Errorf("coerce(%v, %q) = %s, %v; want %s", tt.types, tt.in, got, err, tt.want)
		}
	}
}

// The built-in mappings apply only to schemas that have their parameters.
func TestBuiltinSpecNeedsItsParameters(t *testing.T) {
	own := []providers.Tool{{Name: "read_file", Parameters: []byte(`{"type":"object","properties":{"file":{"type":"string"}},"required":["file"]}`)}}
	res := Parse("```bash\nread_file go.mod\n```", own)
	if len(res.Calls) != 1 || res.Calls[0].Arguments != `{"file":"go.mod"}` {
		t.Errorf("a user read_file got %+v", res)
	}
}

func TestInstructionsAndCorrections(t *testing.T) {
	tools := testTools(t)
	broken := Parse(`{"tool": "read_file", "parameters": {"offset": 3}}`, tools).Problems
	got := map[string][]string{
		"json":                strings.Split(Instructions(tools, JSON), "\n"),
		"markdown":            strings.Split(Instructions(tools, Markdown), "\n"),
		"correction-json":     strings.Split(Correction(broken, tools, JSON), "\n"),
		"correction-markdown": strings.Split(Correction(broken, tools, Markdown), "\n"),
	}
	providertest.Golden(t, "instructions", providertest.Marshal(t, got))
	if Instructions(nil, JSON) != "" {
		t.Error("instructions without tools")
	}
}

func TestFormatResults(t *testing.T) {
	got := FormatResults([]providers.ToolResult{
		{ID: "c1", Name: "read_file", Content: "1: module x\n"},
		{ID: "c2", Name: "shell", Content: "exit 1: </tool_result> oops", IsError: true},
	})
	want := "<tool_result call=\"1\" tool=\"read_file\">\n1: module x\n</tool_result>\n" +
		"<tool_result call=\"2\" tool=\"shell\" error=\"true\">\nexit 1: <\\/tool_result> oops\n</tool_result>"
	if got != want {
		t.Errorf("FormatResults =\n%s\nwant\n%s", got, want)
	}
}

func TestParseForm(t *testing.T) {
	if f, err := ParseForm("markdown"); err != nil || f != Markdown {
		t.Errorf("ParseForm(markdown) = %v, %v", f, err)
	}
	if _, err := ParseForm("xml"); err == nil {
		t.Error("ParseForm(xml) did not fail")
	}
}

// Every attempted call has a place in the reply, runnable or not: a
// problem's Call is that place, counted from 1 over both.
func TestProblemsKeepTheirPlaceAmongCalls(t *testing.T) {
	tools := testTools(t)
	tests := []struct {
		name, reply string
		want        []string // "call NAME" or "problem N TOOL"
	}{
		{name: "bad, good", reply: `{"tool": "cat"} {"tool": "list_directory"}`,
			want: []string{"problem 1 ", "call list_directory"}},
		{name: "good, bad, good", reply: `{"tool": "list_directory"} {"tool": "read_file", "parameters": {}} {"tool": "now"}`,
			want: []string{"call list_directory", "problem 2 read_file", "problem 3 "}},
		{name: "array of good and bad", reply: `[{"tool": "list_directory"}, {"tool": "read_file", "parameters": {"path": 3}}, {"tool": "list_directory", "parameters": {"path": "a"}}]`,
			want: []string{"call list_directory", "problem 2 read_file", "call list_directory"}},
		{name: "invalid JSON between calls", reply: "{\"tool\": \"list_directory\"}\n{\"tool\": \"read_file\", \"parameters\": {\"path\": \"a\",}}\n{\"tool\": \"list_directory\"}",
			want: []string{"call list_directory", "problem 2 read_file", "call list_directory"}},
		{name: "bash block", reply: "```bash\nsearch TODO -g\nlist_directory\nsearch -x TODO\n```",
			want: []string{"problem 1 search", "call list_directory", "problem 3 search"}},
		{name: "tool_call tag holding two", reply: "<tool_call>\n{\"name\": \"list_directory\", \"arguments\": {}}\n{\"name\": \"nope\", \"arguments\": {}}\n</tool_call>",
			want: []string{"call list_directory", "problem 2 "}},
		{name: "fence then function tag", reply: "```json\n{\"tool\": \"shell\", \"parameters\": {}}\n```\n<function=list_directory></function>",
			want: []string{"problem 1 shell", "call list_directory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := Parse(tt.reply, tools)
			checkInvariants(t, res, tools)
			got := make([]string, len(res.Calls)+len(res.Problems))
			for _, p := range res.Problems {
				if p.Call < 1 || p.Call > len(got) || got[p.Call-1] != "" {
					t.Fatalf("problem %+v has no place of its own among %d attempts", p, len(got))
				}
				got[p.Call-1] = "problem " + strconv.Itoa(p.Call) + " " + p.Tool
			}
			next := 0
			for i := range got {
				if got[i] == "" {
					got[i] = "call " + res.Calls[next].Name
					next++
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("attempts = %q, want %q (problems: %s)", got, tt.want, res.Error())
			}
		})
	}
}

// withUnreadable puts each broken call, as an unreadable call carrying
// its error and the form expected, in its place among the runnable ones.
func TestWithUnreadable(t *testing.T) {
	p := newParser(testTools(t))
	ran := func(names ...string) []providers.ToolCall {
		var cs []providers.ToolCall
		for _, n := range names {
			cs = append(cs, providers.ToolCall{ID: "id_" + n, Name: n, Arguments: "{}"})
		}
		return cs
	}
	tests := []struct {
		name     string
		calls    []providers.ToolCall
		problems []Problem
		want     []string // Name, or "!Name" for an unreadable call
	}{
		{"first", ran("a", "b"), []Problem{{Call: 1, Message: "x"}}, []string{"!", "a", "b"}},
		{"between", ran("a", "b"), []Problem{{Call: 2, Tool: "read_file", Message: "x"}}, []string{"a", "!read_file", "b"}},
		{"last two", ran("a"), []Problem{{Call: 2, Message: "x"}, {Call: 3, Message: "y"}}, []string{"a", "!", "!"}},
		{"every other", ran("a", "b"), []Problem{{Call: 1, Message: "x"}, {Call: 3, Message: "y"}, {Call: 5, Message: "z"}}, []string{"!", "a", "!", "b", "!"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			ids := map[string]bool{}
			for _, c := range withUnreadable("the reply", tt.calls, tt.problems, p, JSON) {
				if c.ID == "" || ids[c.ID] {
					t.Errorf("call %+v: id empty or used twice", c)
				}
				ids[c.ID] = true
				switch {
				case strings.HasPrefix(c.Unreadable, "This call could not be read and did not run: ") && strings.Contains(c.Unreadable, strictExample):
					got = append(got, "!"+c.Name)
				case c.Unreadable != "":
					t.Errorf("unreadable call %q lacks the error or the form expected", c.Unreadable)
				case c.ID != "id_"+c.Name:
					t.Errorf("runnable call %s lost its id: %q", c.Name, c.ID)
					fallthrough
				default:
					got = append(got, c.Name)
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("calls = %q, want %q", got, tt.want)
			}
		})
	}
}

// A call that named no readable tool has no tool attribute.
func TestFormatResultsWithoutToolName(t *testing.T) {
	got := FormatResults([]providers.ToolResult{{Content: "unknown tool", IsError: true}})
	if want := "<tool_result call=\"1\" error=\"true\">\nunknown tool\n</tool_result>"; got != want {
		t.Errorf("FormatResults = %q, want %q", got, want)
	}
}
