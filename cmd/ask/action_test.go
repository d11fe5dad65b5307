package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/providers"
)

// actionFile is the repository's action.yml, as far as the runner reads
// it for a composite action.
type actionFile struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID      string            `yaml:"id"`
			Name    string            `yaml:"name"`
			Uses    string            `yaml:"uses"`
			Shell   string            `yaml:"shell"`
			Run     string            `yaml:"run"`
			Workdir string            `yaml:"working-directory"`
			Env     map[string]string `yaml:"env"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) (actionFile, string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionFile
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("action.yml: runs.using is %q, want composite", a.Runs.Using)
	}
	return a, root
}

// TestActionNeverInterpolates checks that no script of the action holds an
// expression: every input, the prompt first, reaches them through env:,
// so that nothing a pull request says is ever read as shell.
func TestActionNeverInterpolates(t *testing.T) {
	t.Parallel()
	a, _ := readAction(t)
	prompt := false
	for _, st := range a.Runs.Steps {
		if strings.Contains(st.Run, "${{") {
			t.Errorf("step %q: its run: script holds an expression; pass the value through env:", st.Name)
		}
		if st.Run != "" && st.Shell != "bash" {
			t.Errorf("step %q: shell is %q, want bash", st.Name, st.Shell)
		}
		for _, v := range st.Env {
			prompt = prompt || strings.Contains(v, "inputs.prompt }}")
		}
	}
	if !prompt {
		t.Error("no step takes inputs.prompt through env:")
	}
}

// actionRunner runs the action's script steps as a runner would: bash
// with -eo pipefail, the step's env with its expressions evaluated, and
// the files of GITHUB_OUTPUT, GITHUB_ENV and GITHUB_PATH read after each
// step. Steps that use another action (setup-go) are left out: Go is
// here already.
type actionRunner struct {
	t          *testing.T
	action     actionFile
	root       string // github.action_path
	workspace  string
	runnerTemp string
	path       []string          // GITHUB_PATH's lines so far, newest first
	env        map[string]string // GITHUB_ENV's so far
	outputs    map[string]map[string]string
}

var expression = regexp.MustCompile(`\$\{\{\s*(.*?)\s*\}\}`)

// eval evaluates the expressions of an action's env and outputs: inputs,
// github.action_path and steps' outputs; any other fails the test.
func (r *actionRunner) eval(s string, inputs map[string]string) string {
	return expression.ReplaceAllStringFunc(s, func(m string) string {
		e := expression.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(e, "inputs."):
			name := strings.TrimPrefix(e, "inputs.")
			in, ok := r.action.Inputs[name]
			if !ok {
				r.t.Fatalf("action.yml: %s: no such input", e)
			}
			if v, ok := inputs[name]; ok {
				return v
			}
			return in.Default
		case e == "github.action_path":
			return r.root
		case strings.HasPrefix(e, "steps."):
			parts := strings.Split(e, ".")
			if len(parts) != 4 || parts[2] != "outputs" {
				r.t.Fatalf("action.yml: %s: not a step's output", e)
			}
			return r.outputs[parts[1]][parts[3]]
		}
		r.t.Fatalf("action.yml: the test does not know the expression %s", m)
		return ""
	})
}

// run runs the action's steps named (all with none) with inputs, and
// returns the action's outputs and the last step's error.
func (r *actionRunner) run(inputs map[string]string, env []string, only ...string) (map[string]string, error) {
	t := r.t
	for i, st := range r.action.Runs.Steps {
		if st.Uses != "" || len(only) > 0 && !contains(only, st.Name) {
			continue
		}
		script := filepath.Join(r.runnerTemp, fmt.Sprintf("step-%d.sh", i))
		if err := os.WriteFile(script, []byte(st.Run), 0o600); err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		for _, name := range []string{"GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH"} {
			files[name] = filepath.Join(r.runnerTemp, fmt.Sprintf("%s-%d", strings.ToLower(name), i))
			if err := os.WriteFile(files[name], nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", script)
		cmd.Dir = r.workspace
		if st.Workdir != "" {
			cmd.Dir = filepath.Join(r.workspace, r.eval(st.Workdir, inputs))
		}
		path := strings.Join(append(append([]string(nil), r.path...), os.Getenv("PATH")), string(os.PathListSeparator))
		cmd.Env = append(env, "PATH="+path, "RUNNER_TEMP="+r.runnerTemp, "GITHUB_WORKSPACE="+r.workspace,
			"GITHUB_OUTPUT="+files["GITHUB_OUTPUT"], "GITHUB_ENV="+files["GITHUB_ENV"], "GITHUB_PATH="+files["GITHUB_PATH"])
		for k, v := range r.env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		for k, v := range st.Env {
			cmd.Env = append(cmd.Env, k+"="+r.eval(v, inputs))
		}
		out, err := cmd.CombinedOutput()
		t.Logf("step %q:\n%s", st.Name, out)
		r.outputs[st.ID] = readCommandFile(t, files["GITHUB_OUTPUT"])
		for k, v := range readCommandFile(t, files["GITHUB_ENV"]) {
			r.env[k] = v
		}
		data, _ := os.ReadFile(files["GITHUB_PATH"])
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if line != "" {
				r.path = append([]string{line}, r.path...)
			}
		}
		if err != nil {
			return r.actionOutputs(inputs), fmt.Errorf("step %q: %w", st.Name, err)
		}
	}
	return r.actionOutputs(inputs), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (r *actionRunner) actionOutputs(inputs map[string]string) map[string]string {
	out := map[string]string{}
	for name, o := range r.action.Outputs {
		out[name] = r.eval(o.Value, inputs)
	}
	return out
}

// readCommandFile reads a GITHUB_OUTPUT or GITHUB_ENV file as the runner
// does: name=value lines, and name<<DELIMITER blocks.
func readCommandFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if name, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(name, "=") {
			var value []string
			closed := false
			for sc.Scan() {
				if sc.Text() == delim {
					closed = true
					break
				}
				value = append(value, sc.Text())
			}
			if !closed {
				t.Errorf("%s: %s<<%s is never closed", filepath.Base(path), name, delim)
			}
			out[name] = strings.Join(value, "\n")
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("%s: line %q is neither name=value nor name<<DELIMITER", filepath.Base(path), line)
			continue
		}
		out[name] = value
	}
	return out
}

// TestActionSteps runs the action's own scripts against the fake
// provider: it builds ask from this checkout, runs it with --safe on a
// prompt that would do harm if it were ever read as shell, and checks the
// outputs the next job reads: the answer, the --json result, the patch.
func TestActionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("slow under -short: it runs the action's scripts end to end (about 3 s)")
	}
	t.Parallel()
	for _, tool := range []string{"bash", "jq", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the action needs %s", tool)
		}
	}
	a, root := readAction(t)
	r := &actionRunner{t: t, action: a, root: root, workspace: t.TempDir(), runnerTemp: t.TempDir(),
		env: map[string]string{}, outputs: map[string]map[string]string{}}
	if err := os.WriteFile(filepath.Join(r.workspace, "main.go"), []byte("package main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	// The runner's environment, without this machine's ask settings and
	// keys.
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "ASK_") || strings.HasSuffix(name, "_API_KEY") || name == "PATH" ||
			name == "HOME" || strings.HasPrefix(name, "XDG_") || strings.HasPrefix(name, "GITHUB_") {
			continue
		}
		env = append(env, kv)
	}
	// Go's caches stay this machine's, so that the build is not a cold one.
	for _, v := range []string{"GOCACHE", "GOMODCACHE", "GOPATH"} {
		out, err := exec.Command("go", "env", v).Output()
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, v+"="+strings.TrimSpace(string(out)))
	}
	env = append(env, "HOME="+home, "OPENAI_API_KEY=fake-test-not-a-real-key-0000", "GOFLAGS=-buildvcs=false")

	if _, err := r.run(nil, env, "Build ask"); err != nil {
		t.Fatal(err)
	}

	harm := filepath.Join(r.workspace, "PWNED")
	prompt := "Review main.go. $(touch " + harm + ") `touch " + harm + "` ${{ github.token }}\n'\"; touch " + harm
	t.Run("answers", func(t *testing.T) {
		r.t = t
		fake := fakeprovider.Start(
			fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "read_file", `{"path":"main.go"}`)}},
			fakeprovider.Reply{Text: "Looks fine.\nask_answer_0000\nNo bugs."},
		)
		defer fake.Close()
		out, err := r.run(map[string]string{"prompt": prompt, "provider": "openai", "base-url": fake.URL}, env, "Run ask")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(harm); err == nil {
			t.Fatal("the prompt ran as shell")
		}
		if got, want := out["answer"], "Looks fine.\nask_answer_0000\nNo bugs."; got != want {
			t.Errorf("answer output %q, want %q", got, want)
		}
		var result struct {
			ID     string `json:"id"`
			Status string `json:"status"`
			Answer string `json:"answer"`
		}
		data, err := os.ReadFile(out["json"])
		if err != nil {
			t.Fatalf("json output: %v", err)
		}
		if err := json.Unmarshal(data, &result); err != nil || result.Status != "completed" || result.ID != out["run-id"] {
			t.Errorf("json output %s: %s (err %v), want status completed and id %q", out["json"], data, err, out["run-id"])
		}
		if patch, err := os.ReadFile(out["patch"]); err != nil || len(patch) != 0 {
			t.Errorf("patch output %s: %q, %v; want an empty file (--safe changes nothing)", out["patch"], patch, err)
		}
		if out["exit-code"] != "0" || out["run-id"] == "" {
			t.Errorf("exit-code %q, run-id %q", out["exit-code"], out["run-id"])
		}
		for _, f := range []string{"answer.txt", "result.json", "changes.patch"} {
			if _, err := os.Stat(filepath.Join(out["output-dir"], f)); err != nil {
				t.Errorf("output-dir: %v", err)
			}
		}
		// The prompt the provider got is the input, byte for byte.
		if reqs := fake.Requests(); len(reqs) == 0 || !strings.Contains(string(reqs[0]), jsonString(t, strings.TrimSuffix(prompt, "\n"))) {
			t.Errorf("the provider did not get the prompt as given")
		}
	})

	t.Run("refused write fails the step, with the outputs written", func(t *testing.T) {
		r.t = t
		fake := fakeprovider.Start(
			fakeprovider.Reply{Calls: []providers.ToolCall{fakeprovider.Call("c1", "write_file", `{"path":"main.go","content":"package evil\n"}`)}},
			fakeprovider.Reply{Text: "I could not write."},
		)
		defer fake.Close()
		out, err := r.run(map[string]string{"prompt": "rewrite main.go", "provider": "openai", "base-url": fake.URL}, env, "Run ask")
		if err == nil {
			t.Fatal("the step passed after ask exited 6")
		}
		if out["exit-code"] != "6" || out["answer"] != "I could not write." {
			t.Errorf("exit-code %q, answer %q; want 6 and the answer", out["exit-code"], out["answer"])
		}
		if data, _ := os.ReadFile(filepath.Join(r.workspace, "main.go")); string(data) != "package main\n" {
			t.Errorf("main.go is %q after a --safe run", data)
		}
	})

	t.Run("no prompt", func(t *testing.T) {
		r.t = t
		_, err := r.run(map[string]string{"provider": "openai"}, env, "Run ask")
		if err == nil || !strings.Contains(err.Error(), "exit status 2") {
			t.Errorf("a step with no prompt: %v, want exit status 2", err)
		}
	})
}

func jsonString(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Trim(string(b), `"`)
}
