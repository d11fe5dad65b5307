package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// userToolsRoot is testdata/usertools as the working directory, so that the
// tools file's commands find their scripts as ./name.sh.
func userToolsRoot(t *testing.T) *Root {
	t.Helper()
	dir, err := filepath.Abs("testdata/usertools")
	if err != nil {
		t.Fatal(err)
	}
	root, err := NewRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func loadUserTools(t *testing.T, root *Root, file string) map[string]Tool {
	t.Helper()
	list, err := LoadToolsFile(filepath.Join("testdata/usertools", file), root)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Tool{}
	for _, tool := range list {
		byName[tool.Info().Name] = tool
	}
	return byName
}

func TestUserToolLoad(t *testing.T) {
	root := userToolsRoot(t)
	list, err := LoadToolsFile("testdata/usertools/tools.json", root)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		risk     Risk
		approval bool
		params   string // "" skips the check
	}
	wants := []struct {
		name string
		want
	}{
		{"greet", want{Read, false, ""}},
		{"echo_stdin", want{Read, false, emptyParameters}},
		{"where_and_env", want{Exec, true, ""}},
		{"fail", want{Write, false, ""}}, // requires_approval: false overrides the default
		{"slow", want{Exec, true, ""}},   // no risk: exec, and so approval
	}
	if len(list) != len(wants) {
		t.Fatalf("loaded %d tools, want %d", len(list), len(wants))
	}
	for i, w := range wants {
		info := list[i].Info()
		if info.Name != w.name || info.Risk != w.risk || info.RequiresApproval != w.approval {
			t.Errorf("tool %d = %s risk %s approval %v, want %s risk %s approval %v",
				i, info.Name, info.Risk, info.RequiresApproval, w.name, w.risk, w.approval)
		}
		if w.params != "" && string(info.Parameters) != w.params {
			t.Errorf("%s parameters = %s, want %s", w.name, info.Parameters, w.params)
		}
	}
	// Parameters are declared compact, as written.
	if got := string(list[0].Info().Parameters); !strings.HasPrefix(got, `{"type":"object","properties":{"name":{"type":"string","minLength":1}`) {
		t.Errorf("greet parameters = %s", got)
	}
	// Every loaded tool fits in a registry next to the built-ins.
	if _, err := NewRegistry(append(Builtins(root), list...)...); err != nil {
		t.Errorf("registry with the user tools: %v", err)
	}

	bare := loadUserTools(t, root, "bare_array.json")
	if _, ok := bare["now"]; !ok || len(bare) != 1 {
		t.Errorf("bare array file loaded %v", bare)
	}
}

func TestUserToolLoadErrors(t *testing.T) {
	root := userToolsRoot(t)
	tests := []struct {
		file string
		want []string // substrings of the error
	}{
		{"bad_unknown_field.json", []string{"bad_unknown_field.json", `tool #2 "typo"`, `unknown field "comand"`, "the fields are: name, description"}},
		{"bad_top_level.json", []string{"bad_top_level.json", `unknown field "tool"`, `the only field is "tools"`}},
		{"bad_name.json", []string{`tool #1 "read file"`, "name must be 1-64 letters"}},
		{"bad_duplicate_builtin.json", []string{`tool #1 "shell"`, "already used by a built-in tool"}},
		{"bad_duplicate.json", []string{`tool #2 "twice"`, "already used by tool #1"}},
		{"bad_schema.json", []string{`tool #1 "typed"`, "parameters is not a valid JSON Schema", "/properties/n/type"}},
		{"bad_schema_not_object.json", []string{`tool #1 "arr"`, `"type" must be "object"`}},
		{"bad_risk.json", []string{`tool #1 "risky"`, `risk "dangerous": choose read, write or exec`}},
		{"bad_timeout.json", []string{`tool #1 "slowpoke"`, `timeout "ten seconds"`}},
		{"bad_missing_command.json", []string{`tool #1 "nothing"`, "command is required"}},
		{"bad_json.json", []string{"bad_json.json: invalid JSON at line 2, column 1: unexpected end of JSON input"}},
		{"bad_trailing_comma.json", []string{"bad_trailing_comma.json: invalid JSON at line 2, column 67: invalid character '}'"}},
		{"bad_empty.json", []string{"no tools declared"}},
		{"no_such_file.json", []string{"no_such_file.json", "no such file"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			_, err := LoadToolsFile(filepath.Join("testdata/usertools", tt.file), root)
			if err == nil {
				t.Fatal("loaded without an error")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
		})
	}
}

func TestUserToolLoadInline(t *testing.T) {
	root := newTestRoot(t, nil)
	tests := []struct {
		name, file string
		wantErr    string
	}{
		{"numeric timeout", `{"tools":[{"name":"a","description":"d","command":"true","timeout":2.5}]}`, ""},
		{"zero timeout", `{"tools":[{"name":"a","description":"d","command":"true","timeout":0}]}`, "must be positive"},
		{"negative duration", `{"tools":[{"name":"a","description":"d","command":"true","timeout":"-1s"}]}`, "must be positive"},
		{"timeout of a wrong type", `{"tools":[{"name":"a","description":"d","command":"true","timeout":true}]}`, "timeout true"},
		{"no description", `{"tools":[{"name":"a","command":"true"}]}`, "description is required"},
		{"no name", `{"tools":[{"description":"d","command":"true"}]}`, "tool #1: name is required"},
		{"name too long", `{"tools":[{"name":"` + strings.Repeat("n", 65) + `","description":"d","command":"true"}]}`, "name must be"},
		{"parameters not an object", `{"tools":[{"name":"a","description":"d","command":"true","parameters":[1]}]}`, "parameters must be a JSON Schema object"},
		{"ref to a file is refused", `{"tools":[{"name":"a","description":"d","command":"true","parameters":{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}}]}`, "parameters"},
		{"name of a wrong type", `{"tools":[{"name":5,"description":"d","command":"true"}]}`, "not a valid tool object"},
		{"trailing data", `{"tools":[{"name":"a","description":"d","command":"true"}]} {}`, "invalid JSON at line 1, column 61: invalid character '{' after top-level value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tools.json")
			if err := os.WriteFile(path, []byte(tt.file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadToolsFile(path, root)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestUserToolRun(t *testing.T) {
	root := userToolsRoot(t)
	tools := loadUserTools(t, root, "tools.json")
	t.Setenv("OPENAI_API_KEY", "fake-must-not-leak")
	t.Setenv("ASK_TEST_VISIBLE", "visible")
	tests := []struct {
		name, tool, args string
		want             string // exact result, or
		contains         []string
		absent           []string
		wantErr          bool
	}{
		{name: "stdout is the result", tool: "greet", args: `{"name":"Ada"}`, want: "hello, Ada\n"},
		{name: "arguments reach the command", tool: "greet", args: `{"name":"Ada","times":2}`, want: "hello, Ada\nhello, Ada\n"},
		{name: "stdin holds the arguments JSON", tool: "echo_stdin", args: ` {"a": [1, "two"]} `, want: "{\"a\": [1, \"two\"]}\n"},
		{name: "empty arguments are {}", tool: "echo_stdin", args: ``, want: "{}\n"},
		{name: "runs in the working directory without credentials", tool: "where_and_env", args: `{}`,
			contains: []string{root.Dir() + "\n", "ASK_TEST_VISIBLE=visible"}, absent: []string{"OPENAI_API_KEY", "must-not-leak"}},
		{name: "non-zero exit is an error with stdout and stderr", tool: "fail", args: `{}`, wantErr: true,
			want: "fail failed:\nexit code: 3\nstdout:\npartial output\nstderr:\ndisk quota exceeded"},
		{name: "missing required argument", tool: "greet", args: `{"times":1}`, wantErr: true,
			contains: []string{"invalid arguments for greet:", `required: missing properties: ["name"]`}},
		{name: "a violation is named with the schema", tool: "greet", args: `{"name":"","times":1}`, wantErr: true,
			contains: []string{"invalid arguments for greet:\n- at /properties/name: minLength:", "parameters schema: {"}},
		{name: "an unknown key", tool: "greet", args: `{"name":"Ada","extra":true}`, wantErr: true,
			contains: []string{"invalid arguments for greet:", `unexpected additional properties ["extra"]`}},
		{name: "wrong type", tool: "greet", args: `{"name":7}`, wantErr: true, contains: []string{`at /properties/name: type: 7 has type "integer", want "string"`}},
		{name: "not an object", tool: "greet", args: `["Ada"]`, wantErr: true, want: "invalid arguments for greet: must be a JSON object, got an array"},
		{name: "not JSON", tool: "greet", args: `{"name":`, wantErr: true, contains: []string{"invalid arguments for greet: not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runAlone(tools[tt.tool], tt.args)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error = %v, want error %v (result %q)", err, tt.wantErr, got)
			}
			if err != nil {
				got = err.Error()
			}
			if tt.want != "" && got != tt.want {
				t.Errorf("result =\n%q\nwant\n%q", got, tt.want)
			}
			for _, c := range tt.contains {
				if !strings.Contains(got, c) {
					t.Errorf("result\n%s\ndoes not contain %q", got, c)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(got, a) {
					t.Errorf("result contains %q", a)
				}
			}
		})
	}
}

// Arguments the schema rejects never reach the command.
func TestUserToolInvalidArgumentsDoNotRun(t *testing.T) {
	root := newTestRoot(t, nil)
	path := filepath.Join(t.TempDir(), "tools.json")
	spec := `{"tools":[{"name":"touch","description":"d","command":"touch ran",` +
		`"parameters":{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}}]}`
	if err := os.WriteFile(path, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	list, err := LoadToolsFile(path, root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := runTool(t, list[0], `{"n":"one"}`); err == nil {
		t.Fatal("invalid arguments accepted")
	}
	if _, err := os.Stat(filepath.Join(root.Dir(), "ran")); err == nil {
		t.Fatal("the command ran with invalid arguments")
	}
	if _, err := runTool(t, list[0], `{"n":1}`); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root.Dir(), "ran")); err != nil {
		t.Fatal("the command did not run with valid arguments")
	}
}

func TestUserToolTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it waits out a timeout")
	}
	root := userToolsRoot(t)
	tools := loadUserTools(t, root, "tools.json")
	start := time.Now()
	_, err := runTool(t, tools["slow"], `{}`)
	if err == nil {
		t.Fatal("a command past its timeout succeeded")
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("the call took %s with a 1s timeout", elapsed)
	}
	msg := err.Error()
	for _, want := range []string{"slow failed:", "timed out after 1s (its whole process group was killed)", "started"} {
		if !strings.Contains(msg, want) {
			t.Errorf("timeout result\n%s\ndoes not contain %q", msg, want)
		}
	}
	if strings.Contains(msg, "never") {
		t.Error("the command went on after its timeout")
	}
	// The background job went with the group.
	_, rest, _ := strings.Cut(msg, "child ")
	pid, convErr := strconv.Atoi(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]))
	if convErr != nil {
		t.Fatalf("no child pid in %q", msg)
	}
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("background job %d outlived the timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestUserToolCancelled(t *testing.T) {
	root := userToolsRoot(t)
	tools := loadUserTools(t, root, "tools.json")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	_, err := tools["where_and_env"].Run(ctx, json.RawMessage(`{}`)) // fast; must not be affected
	if err != nil {
		t.Fatalf("quick call: %v", err)
	}
	_, err = tools["slow"].Run(ctx, json.RawMessage(`{}`))
	if err == nil || !strings.Contains(err.Error(), "the run was cancelled") {
		t.Errorf("cancelled call: %v", err)
	}
}

// Through the registry, a user tool behaves like a built-in: validated
// arguments, error results for failures.
func TestUserToolViaRegistry(t *testing.T) {
	root := userToolsRoot(t)
	list, err := LoadToolsFile("testdata/usertools/tools.json", root)
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRegistry(append(Builtins(root), list...)...)
	if err != nil {
		t.Fatal(err)
	}
	if got, isErr := r.Call(context.Background(), "greet", `{"name":"Bo"}`); isErr || got != "hello, Bo\n" {
		t.Errorf("greet = %q, error %v", got, isErr)
	}
	if got, isErr := r.Call(context.Background(), "greet", `{"name":3}`); !isErr || !strings.Contains(got, "invalid arguments for greet") {
		t.Errorf("bad greet = %q, error %v", got, isErr)
	}
	if got, isErr := r.Call(context.Background(), "fail", `{}`); !isErr || !strings.Contains(got, "exit code: 3") {
		t.Errorf("fail = %q, error %v", got, isErr)
	}
}

// runAlone runs a user tool without a registry: it checks its arguments
// itself, since its command must never see arguments its schema refuses.
func runAlone(tool Tool, args string) (string, error) {
	return tool.Run(context.Background(), json.RawMessage(args))
}
