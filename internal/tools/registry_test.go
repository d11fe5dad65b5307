package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// funcTool is a small real Tool built from a function, for registry tests.
type funcTool struct {
	info Info
	run  func(ctx context.Context, args json.RawMessage) (string, error)
}

func (f funcTool) Info() Info { return f.info }
func (f funcTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	return f.run(ctx, args)
}

func echoTool(name, schema string) funcTool {
	return funcTool{
		info: Info{Name: name, Description: "echo", Parameters: json.RawMessage(schema), Risk: Read},
		run:  func(_ context.Context, args json.RawMessage) (string, error) { return "ran with " + string(args), nil },
	}
}

const greetSchema = `{"type":"object","properties":{"name":{"type":"string","minLength":1},"times":{"type":"integer","minimum":1,"maximum":3}},"required":["name"]}`

func TestNewRegistry(t *testing.T) {
	tests := []struct {
		name    string
		tools   []Tool
		wantErr string
	}{
		{"ok", []Tool{echoTool("a", ""), echoTool("b-2_c", greetSchema)}, ""},
		{"duplicate", []Tool{echoTool("a", ""), echoTool("a", "")}, "already registered"},
		{"empty name", []Tool{echoTool("", "")}, "name must be"},
		{"bad name", []Tool{echoTool("read file", "")}, "name must be"},
		{"long name", []Tool{echoTool(strings.Repeat("x", 65), "")}, "name must be"},
		{"schema not JSON", []Tool{echoTool("a", `{"type":`)}, "JSON Schema object"},
		{"schema not an object", []Tool{echoTool("a", `["x"]`)}, "JSON Schema object"},
		{"nil tool", []Tool{nil}, "nil tool"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewRegistry(tt.tools...)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("NewRegistry error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("NewRegistry error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestRegistryListGetOrder(t *testing.T) {
	root, err := NewRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(Builtins(root)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add(echoTool("zz_extra", "")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range r.List() {
		names = append(names, tool.Info().Name)
	}
	want := "read_file list_directory search edit_file write_file shell zz_extra"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("List() names = %q, want %q", got, want)
	}
	if tool, ok := r.Get("search"); !ok || tool.Info().Name != "search" {
		t.Errorf("Get(search) = %v, %v", tool, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found a tool")
	}
	if err := r.Add(echoTool("shell", "")); err == nil {
		t.Error("Add of a second shell succeeded")
	}
	var zero Registry // the zero value is usable too
	if err := zero.Add(echoTool("a", "")); err != nil {
		t.Errorf("zero Registry Add: %v", err)
	}
}

func TestRegistryCall(t *testing.T) {
	r, err := NewRegistry(
		echoTool("greet", greetSchema),
		echoTool("noschema", ""),
		funcTool{info: Info{Name: "fails", Risk: Read}, run: func(context.Context, json.RawMessage) (string, error) {
			return "", errors.New("disk on fire")
		}},
		funcTool{info: Info{Name: "panics", Risk: Read}, run: func(context.Context, json.RawMessage) (string, error) {
			panic("boom")
		}},
		echoTool("badschema", `{"type":"nonsense"}`),
		echoTool("fileref", `{"$ref":"file:///etc/passwd"}`),
	)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, tool, args string
		wantErr          bool
		want             []string // substrings of the content
	}{
		{"valid", "greet", `{"name":"ada"}`, false, []string{`ran with {"name":"ada"}`}},
		{"integral float is an integer", "greet", `{"name":"ada","times":2.0}`, false, []string{"ran with"}},
		{"empty arguments are {}", "noschema", ``, false, []string{"ran with {}"}},
		{"blank arguments are {}", "noschema", " \n ", false, []string{"ran with {}"}},
		{"unknown tool", "gret", `{}`, true, []string{`unknown tool "gret"`, "available tools: greet, noschema, fails, panics, badschema, fileref"}},
		{"invalid JSON", "greet", `{"name":`, true, []string{"invalid arguments for greet", "not valid JSON", "unexpected end of JSON input"}},
		{"trailing garbage", "greet", `{"name":"a"} x`, true, []string{"not valid JSON", "invalid character 'x'"}},
		{"array", "greet", `["ada"]`, true, []string{"must be a JSON object, got an array"}},
		{"string", "noschema", `"ada"`, true, []string{"must be a JSON object, got a string"}},
		{"null", "noschema", `null`, true, []string{"must be a JSON object, got null"}},
		{"missing required", "greet", `{}`, true, []string{"invalid arguments for greet", `required: missing properties: ["name"]`, "parameters schema: {"}},
		{"wrong type", "greet", `{"name":"a","times":"two"}`, true, []string{"- at /properties/times: type: two has type \"string\", want \"integer\""}},
		{"out of range", "greet", `{"name":"a","times":9}`, true, []string{"at /properties/times", "maximum"}},
		{"tool error", "fails", `{}`, true, []string{"disk on fire"}},
		{"tool panic", "panics", `{}`, true, []string{"panics failed unexpectedly: boom"}},
		{"invalid schema", "badschema", `{}`, true, []string{"parameters schema is invalid"}},
		{"schema refs are not loaded", "fileref", `{}`, true, []string{"parameters schema is invalid", "loading file:///etc/passwd", "nothing is loaded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isErr := r.Call(context.Background(), tt.tool, tt.args)
			if isErr != tt.wantErr {
				t.Errorf("Call isError = %v, want %v (content %q)", isErr, tt.wantErr, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("Call content = %q, want it to contain %q", got, w)
				}
			}
		})
	}
}

func TestCallEmptyRegistry(t *testing.T) {
	r, _ := NewRegistry()
	got, isErr := r.Call(context.Background(), "x", "{}")
	if !isErr || !strings.Contains(got, "no tools are available") {
		t.Errorf("Call on empty registry = %q, %v", got, isErr)
	}
}

// Calls run concurrently in the loop; the lazy schema compilation must be
// race-free (run with -race).
func TestCallConcurrent(t *testing.T) {
	r, err := NewRegistry(echoTool("greet", greetSchema))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for i := range 64 {
		wg.Go(func() {
			args := fmt.Sprintf(`{"name":"n%d"}`, i)
			if i%2 == 1 {
				args = `{}`
			}
			got, isErr := r.Call(context.Background(), "greet", args)
			if isErr != (i%2 == 1) {
				errs <- got
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("unexpected result: %q", e)
	}
}

// The whole first request must stay under 8 KB, so the six built-in
// declarations, in the standardized tools format, get at most 2.5 KB.
func TestBuiltinDeclarationsBudget(t *testing.T) {
	root, err := NewRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	type function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	type decl struct {
		Type     string   `json:"type"`
		Function function `json:"function"`
	}
	var decls []decl
	for _, tool := range Builtins(root) {
		info := tool.Info()
		decls = append(decls, decl{"function", function{info.Name, info.Description, info.Parameters}})
	}
	data, err := json.Marshal(decls)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 2500 {
		t.Errorf("built-in declarations take %d bytes, budget 2500:\n%s", len(data), data)
	}
	t.Logf("built-in declarations: %d bytes", len(data))
}

func TestBuiltinInfo(t *testing.T) {
	root, err := NewRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Risk{
		"read_file": Read, "list_directory": Read, "search": Read,
		"edit_file": Write, "write_file": Write, "shell": Exec,
	}
	r, err := NewRegistry(Builtins(root)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range r.List() {
		info := tool.Info()
		if info.Risk != want[info.Name] {
			t.Errorf("%s risk = %q, want %q", info.Name, info.Risk, want[info.Name])
		}
		if info.Description == "" {
			t.Errorf("%s has no description", info.Name)
		}
		// Every schema compiles: a call with no arguments is refused for a
		// missing property or accepted, never for a broken schema.
		if e := r.lookup(info.Name); e != nil {
			if _, err := e.compiled(); err != nil {
				t.Errorf("%s schema does not compile: %v", info.Name, err)
			}
		}
	}
}

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		want bool
	}{
		{"read_file", true},
		{"everything__get-env", true},
		{"A", true},
		{"0", true},
		{"_", true},
		{"-", true},
		{"Tool_9-x", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{"read file", false},
		{"read.file", false},
		{"read/file", false},
		{"tool:", false},
		{"ünicode", false},
		{"tab\t", false},
		{"nl\n", false},
		{"nul\x00", false},
		{"a@b", false},
		{"[", false},
		{"`", false},
		{"{", false},
	}
	for _, tt := range tests {
		if got := validName.MatchString(tt.name); got != tt.want {
			t.Errorf("validName(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// FuzzValidName holds the byte loop to the regexp it replaced.
func FuzzValidName(f *testing.F) {
	re := regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	for _, s := range []string{"read_file", "", "a b", strings.Repeat("y", 65), "é", "Z9_-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validName.MatchString(s), re.MatchString(s); got != want {
			t.Fatalf("validName(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}

// spyTool is a tool that notes whether it ran and does nothing else.
type spyTool struct {
	Tool
	ran *bool
}

func (s spyTool) Run(context.Context, json.RawMessage) (string, error) {
	*s.ran = true
	return "ran", nil
}

// TestBuiltinSchemasHoldTheChecks: a built-in tool's arguments are declared
// once, in its schema, and the registry refuses what the schema refuses
// before the tool runs. Generated from the schemas: every required
// argument left out, every string that must not be empty given "" or
// blanks, every integer below its minimum.
func TestBuiltinSchemasHoldTheChecks(t *testing.T) {
	t.Parallel()
	type property struct {
		Type      string   `json:"type"`
		MinLength int      `json:"minLength"`
		Pattern   string   `json:"pattern"`
		Minimum   *float64 `json:"minimum"`
	}
	checked := 0
	for _, builtin := range Builtins(nil) {
		info := builtin.Info()
		var params struct {
			Properties map[string]property `json:"properties"`
			Required   []string            `json:"required"`
		}
		if err := json.Unmarshal(info.Parameters, &params); err != nil {
			t.Fatalf("%s: parameters: %v", info.Name, err)
		}
		ran := false
		reg, err := NewRegistry(spyTool{builtin, &ran})
		if err != nil {
			t.Fatal(err)
		}
		valid := map[string]any{}
		for _, name := range params.Required {
			switch params.Properties[name].Type {
			case "string":
				valid[name] = "x"
			case "integer":
				valid[name] = 1
			default:
				t.Fatalf("%s: required %s of type %q: teach this test a valid value", info.Name, name, params.Properties[name].Type)
			}
		}
		call := func(args map[string]any) (string, bool) {
			ran = false
			b, _ := json.Marshal(args)
			out, failed := reg.Call(context.Background(), info.Name, string(b))
			return out, failed && !ran
		}
		if out, refused := call(valid); refused {
			t.Fatalf("%s: the smallest valid arguments %v are refused: %s", info.Name, valid, out)
		}
		with := func(name string, v any) map[string]any {
			args := maps.Clone(valid)
			if v == nil {
				delete(args, name)
			} else {
				args[name] = v
			}
			return args
		}
		for name, p := range params.Properties {
			var bad []any
			if slices.Contains(params.Required, name) {
				bad = append(bad, nil)
			}
			if p.MinLength > 0 || p.Pattern != "" {
				bad = append(bad, "")
			}
			if p.Pattern == `\S` {
				bad = append(bad, " \t\n")
			}
			if p.Minimum != nil {
				bad = append(bad, *p.Minimum-1)
			}
			for _, v := range bad {
				checked++
				out, refused := call(with(name, v))
				if !refused || !strings.HasPrefix(out, "invalid arguments for "+info.Name) || !strings.Contains(out, name) {
					t.Errorf("%s with %s = %#v: refused before running = %v, result %q; want the schema's refusal naming %s", info.Name, name, v, refused, out, name)
				}
			}
		}
	}
	const held = 18 // the checks the built-in schemas hold today
	if checked < held {
		t.Errorf("%d refusals checked, %d before: a built-in schema lost a check", checked, held)
	}
}
