package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ask-cli/ask/internal/fakeprovider"
	"github.com/ask-cli/ask/internal/runtest"
)

// configOutput is what `ask config` prints in a pipe.
type configOutput struct {
	File     string `json:"config_file"`
	Found    bool   `json:"config_found"`
	Settings map[string]struct {
		Value  any    `json:"value"`
		Source string `json:"source"`
	} `json:"settings"`
}

func askConfig(t *testing.T, env map[string]string, args ...string) configOutput {
	t.Helper()
	r := runAsk(t, askEnv{env: env}, append(args, "config")...)
	if r.code != 0 {
		t.Fatalf("ask config: exit %d: %s", r.code, r.stderr)
	}
	var out configOutput
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("ask config printed no JSON: %v\n%s", err, r.stdout)
	}
	return out
}

const precedenceConfig = `{
  "provider": "anthropic",
  "model": "claude-from-file",
  "mode": "plan",
  "max_steps": 12,
  "timeout": "10m",
  "providers": {
    "openai": {"base_url": "http://file.example/v1", "key_env": "WORK_OPENAI_KEY", "model": "gpt-from-file"},
    "anthropic": {"api_key": "fake-ant-from-the-file"}
  },
  "tools": {"allow": ["read_file"], "deny": ["shell:rm *"]},
  "profiles": {
    "ci": {"mode": "ask", "safe": true, "provider": "openai", "tools": {"allow": []}},
    "local": {"provider": "ollama", "color": "never"}
  }
}`

func TestConfigPrecedence(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := runtest.WriteConfig(t, home, precedenceConfig)
	fromFile, fromCI, fromLocal := "config "+file, "config "+file+":ci", "config "+file+":local"
	tests := []struct {
		name       string
		env        map[string]string
		args       []string
		setting    string
		value      any
		source     string
		noFile     bool
		xdgHomeDir bool
	}{
		{name: "default without a file", noFile: true, setting: "mode", value: "agent", source: "default"},
		{name: "file over default", setting: "mode", value: "plan", source: fromFile},
		{name: "flag over file", args: []string{"--mode", "agent"}, setting: "mode", value: "agent", source: "flag --mode"},
		{name: "profile over top level", args: []string{"--profile", "ci"}, setting: "mode", value: "ask", source: fromCI},
		{name: "profile from the environment", env: map[string]string{"ASK_PROFILE": "ci"}, setting: "profile", value: "ci", source: "env ASK_PROFILE"},
		{name: "profile flag over environment", env: map[string]string{"ASK_PROFILE": "ci"}, args: []string{"--profile", "local"},
			setting: "provider", value: "ollama", source: fromLocal},
		// The profile's mode ask allows 3 steps: the file's 12 shows in the source.
		{name: "top level shows through a profile", args: []string{"--profile", "ci"}, setting: "max-steps", value: 3.0, source: "mode ask (12 steps, from " + fromFile + ", is more than it allows)"},
		{name: "a profile's empty list clears", args: []string{"--profile", "ci"}, setting: "allow-tool", value: []any{}, source: fromCI},
		{name: "list from the file", setting: "deny-tool", value: []any{"shell:rm *"}, source: fromFile},
		{name: "an allow flag replaces the file's", args: []string{"--allow-tool", "shell"}, setting: "allow-tool", value: []any{"shell"}, source: "flag --allow-tool"},
		// Deny rules from every layer add up: a flag cannot lift the file's.
		{name: "a deny flag adds to the file's", args: []string{"--deny-tool", "shell"}, setting: "deny-tool", value: []any{"shell:rm *", "shell"}, source: fromFile + ", flag --deny-tool"},
		{name: "a profile's deny adds to the top level's", args: []string{"--profile", "local", "--deny-tool", "x"}, setting: "deny-tool", value: []any{"shell:rm *", "x"}, source: fromFile + ", flag --deny-tool"},
		{name: "duration from the file", setting: "timeout", value: "10m0s", source: fromFile},
		{name: "provider from the file", setting: "provider", value: "anthropic", source: fromFile},
		{name: "env provider over file", env: map[string]string{"ASK_PROVIDER": "openai"}, setting: "provider", value: "openai", source: "env ASK_PROVIDER"},
		{name: "flag provider over env", env: map[string]string{"ASK_PROVIDER": "openai"}, args: []string{"-p", "ollama"}, setting: "provider", value: "ollama", source: "flag --provider"},
		{name: "auto provider without a file", noFile: true, env: map[string]string{"OPENAI_API_KEY": "k"}, setting: "provider", value: "openai", source: "default: the first provider whose key is set (OPENAI_API_KEY)"},
		{name: "model from the file", setting: "model", value: "claude-from-file", source: fromFile},
		{name: "provider's model from the file", args: []string{"-p", "openai"}, setting: "model", value: "gpt-from-file", source: fromFile},
		{name: "a model belongs to its provider", args: []string{"-p", "ollama"}, setting: "model", value: "qwen3", source: "default"},
		{name: "env model over file", env: map[string]string{"ASK_MODEL": "env-model"}, setting: "model", value: "env-model", source: "env ASK_MODEL"},
		{name: "flag model over env", env: map[string]string{"ASK_MODEL": "env-model"}, args: []string{"-m", "flag-model"}, setting: "model", value: "flag-model", source: "flag --model"},
		{name: "base URL from the file", args: []string{"-p", "openai"}, setting: "base-url", value: "http://file.example/v1", source: fromFile},
		{name: "provider's variable over file", args: []string{"-p", "openai"}, env: map[string]string{"OPENAI_BASE_URL": "http://env.example/v1"},
			setting: "base-url", value: "http://env.example/v1", source: "env OPENAI_BASE_URL"},
		{name: "ASK_BASE_URL over provider's variable", args: []string{"-p", "openai"}, env: map[string]string{"OPENAI_BASE_URL": "http://a/v1", "ASK_BASE_URL": "http://b/v1"},
			setting: "base-url", value: "http://b/v1", source: "env ASK_BASE_URL"},
		{name: "flag base URL over all", args: []string{"-p", "openai", "--base-url", "http://flag/v1"}, env: map[string]string{"ASK_BASE_URL": "http://b/v1"},
			setting: "base-url", value: "http://flag/v1", source: "flag --base-url"},
		{name: "default base URL", args: []string{"-p", "anthropic"}, setting: "base-url", value: "https://api.anthropic.com/v1", source: "default"},
		{name: "key from the file", setting: "key", value: "set", source: fromFile},
		{name: "key variable over the file's key", env: map[string]string{"ANTHROPIC_API_KEY": "fake-env"}, setting: "key", value: "set", source: "env ANTHROPIC_API_KEY"},
		{name: "key_env names the variable", args: []string{"-p", "openai"}, env: map[string]string{"WORK_OPENAI_KEY": "fake-work", "OPENAI_API_KEY": "fake-personal"},
			setting: "key", value: "set", source: "env WORK_OPENAI_KEY"},
		{name: "key_env replaces the usual variable", args: []string{"-p", "openai"}, env: map[string]string{"OPENAI_API_KEY": "fake-personal"},
			setting: "key", value: "unset", source: "needed: set WORK_OPENAI_KEY"},
		{name: "no key needed", args: []string{"-p", "ollama"}, setting: "key", value: "unset", source: "not needed"},
		{name: "colour from a profile", args: []string{"--profile", "local"}, setting: "color", value: "never", source: fromLocal},
		{name: "NO_COLOR over the file", args: []string{"--profile", "local"}, env: map[string]string{"NO_COLOR": "1"}, setting: "color", value: "never", source: "env NO_COLOR"},
		{name: "colour flag over NO_COLOR", args: []string{"--color", "always"}, env: map[string]string{"NO_COLOR": "1"}, setting: "color", value: "always", source: "flag --color"},
		{name: "XDG_CONFIG_HOME", xdgHomeDir: true, setting: "mode", value: "plan", source: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": home}
			if tt.noFile {
				env["HOME"] = t.TempDir()
			}
			if tt.xdgHomeDir {
				xdg := t.TempDir()
				os.MkdirAll(filepath.Join(xdg, "ask"), 0o700)
				os.WriteFile(filepath.Join(xdg, "ask", "config.json"), []byte(`{"mode": "plan"}`), 0o600)
				env["XDG_CONFIG_HOME"] = xdg
				tt.source = "config " + filepath.Join(xdg, "ask", "config.json")
			}
			for k, v := range tt.env {
				env[k] = v
			}
			out := askConfig(t, env, tt.args...)
			got, ok := out.Settings[tt.setting]
			if !ok {
				t.Fatalf("ask config has no %q: %+v", tt.setting, out.Settings)
			}
			if !reflect.DeepEqual(got.Value, tt.value) || got.Source != tt.source {
				t.Errorf("%s = %#v from %q, want %#v from %q", tt.setting, got.Value, got.Source, tt.value, tt.source)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		config  string
		env     map[string]string
		args    []string
		wantErr string // in the one stderr line
	}{
		{name: "unknown key", config: "{\n  \"mdoe\": \"ask\"\n}", args: []string{"x"},
			wantErr: `config.json:2:3: unknown key "mdoe" at the top level: did you mean "mode"?`},
		{name: "unknown key with ask config", config: "{\n  \"mdoe\": \"ask\"\n}", args: []string{"config"}, wantErr: `config.json:2:3: unknown key "mdoe"`},
		{name: "malformed", config: "{\n \"mode\": \"ask\",\n}", args: []string{"x"}, wantErr: `config.json:3:1: not valid JSON`},
		{name: "wrong type", config: `{"max_steps": "ten"}`, args: []string{"x"}, wantErr: `config.json:1:2: max_steps: want a whole number, got a string`},
		{name: "bad value", config: `{"profiles": {"ci": {"mode": "yolo"}}}`, args: []string{"x"}, wantErr: `profiles.ci.mode: "yolo": choose ask, plan or agent`},
		{name: "unknown profile", config: `{"profiles": {"ci": {}}}`, args: []string{"--profile", "cj", "x"}, wantErr: `no profile "cj": choose ci`},
		{name: "profile without a file", args: []string{"--profile", "ci", "x"}, wantErr: `no profile "ci": the file does not exist`},
		{name: "unknown profile from the environment", config: `{}`, env: map[string]string{"ASK_PROFILE": "nope"}, args: []string{"config"}, wantErr: `no profile "nope"`},
		{name: "bad pattern names the file", config: `{"tools": {"allow": [":x"]}}`, args: []string{"x"}, wantErr: `config.json:1:12: tools.allow: tool pattern ":x" has no tool name`},
		{name: "ASK_CONFIG must exist", env: map[string]string{"ASK_CONFIG": "/nonexistent/ask.json"}, args: []string{"x"}, wantErr: `/nonexistent/ask.json`},
		{name: "bad --color", args: []string{"--color", "blue", "x"}, wantErr: `--color "blue": choose auto, always or never`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.config != "" {
				runtest.WriteConfig(t, home, tt.config)
			}
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			r := runAsk(t, askEnv{env: env}, tt.args...)
			if r.code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", r.code, exitUsage, r.stderr)
			}
			if lines := strings.Split(strings.TrimSpace(r.stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ask: ") || !strings.Contains(lines[0], tt.wantErr) {
				t.Errorf("stderr %q, want one ask: line with %q", r.stderr, tt.wantErr)
			}
			if r.stdout != "" {
				t.Errorf("stdout %q, want nothing", r.stdout)
			}
		})
	}
}

// A broken file does not stop what needs no settings.
func TestBrokenConfigSparesHelpAndCompletion(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	runtest.WriteConfig(t, home, `{"nope": 1}`)
	for _, args := range [][]string{{"--help"}, {"--version"}, {"completion", "bash"}, {"replay", "--help"}} {
		r := runAsk(t, askEnv{env: map[string]string{"HOME": home}}, args...)
		if r.code != 0 || r.stdout == "" {
			t.Errorf("ask %v: exit %d, stdout %d bytes, stderr %q", args, r.code, len(r.stdout), r.stderr)
		}
	}
}

func TestConfigFlagDefaultsShowInHelp(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	runtest.WriteConfig(t, home, `{"max_steps": 21}`)
	r := runAsk(t, askEnv{env: map[string]string{"HOME": home}}, "--help")
	if !strings.Contains(r.stdout, "(default: 21)") {
		t.Errorf("--help does not show the configured default:\n%s", r.stdout)
	}
}

func TestAskConfigOutput(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	file := runtest.WriteConfig(t, home, `{"mode": "plan", "providers": {"anthropic": {"api_key": "fake-ant-never-shown"}}}`)
	env := map[string]string{"HOME": home, "ASK_PROVIDER": "anthropic"}

	tty := runAsk(t, askEnv{env: env, tty: true}, "config")
	if tty.code != 0 {
		t.Fatalf("exit %d: %s", tty.code, tty.stderr)
	}
	lines := strings.Split(tty.stdout, "\n")
	if lines[0] != "config file: "+file {
		t.Errorf("first line %q", lines[0])
	}
	if !strings.HasPrefix(lines[2], "SETTING") || !strings.Contains(lines[2], "VALUE") || !strings.Contains(lines[2], "SOURCE") {
		t.Errorf("no table header: %q", lines[2])
	}
	for _, want := range []string{"mode ", "plan ", "config " + file, "key ", "set ", "env ASK_PROVIDER"} {
		if !strings.Contains(tty.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, tty.stdout)
		}
	}

	piped := runAsk(t, askEnv{env: env}, "config")
	forced := runAsk(t, askEnv{env: env, tty: true}, "config", "--json")
	for name, r := range map[string]askResult{"piped": piped, "--json on a terminal": forced} {
		var out configOutput
		if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
			t.Errorf("%s: not JSON: %v\n%s", name, err, r.stdout)
			continue
		}
		if out.File != file || !out.Found || out.Settings["mode"].Value != "plan" || out.Settings["key"].Value != "set" {
			t.Errorf("%s: %+v", name, out)
		}
	}
	if !strings.HasPrefix(piped.stdout, `{"config_file":`) || strings.Count(piped.stdout, "\n") != 1 {
		t.Errorf("piped JSON is not one compact line: %q", piped.stdout)
	}
	for _, r := range []askResult{tty, piped, forced} {
		if strings.Contains(r.stdout+r.stderr, "never-shown") {
			t.Errorf("the key was printed")
		}
	}

	missing := runAsk(t, askEnv{env: map[string]string{"HOME": t.TempDir()}, tty: true}, "config")
	if !strings.Contains(missing.stdout, "(not found)") {
		t.Errorf("a missing file is not shown as such:\n%s", missing.stdout)
	}
	if r := runAsk(t, askEnv{env: env}, "config", "extra"); r.code != exitUsage {
		t.Errorf("ask config extra: exit %d", r.code)
	}
}

// TestKeyFileWarningIsQuietUnderQ: the warning that the config file
// holding the key is readable (internal/run's
// TestWarnsWhenTheKeyFileIsReadable) is a note, which -q keeps to itself.
func TestKeyFileWarningIsQuietUnderQ(t *testing.T) {
	t.Parallel()
	srv := fakeprovider.Start(fakeprovider.Reply{Text: "a"}, fakeprovider.Reply{Text: "b"})
	defer srv.Close()
	home := t.TempDir()
	path := runtest.WriteConfig(t, home, fmt.Sprintf(`{"provider": "openai", "providers": {"openai": {"base_url": %q, "api_key": "fake-x"}}}`, srv.URL))
	os.Chmod(path, 0o644)
	r := runAsk(t, askEnv{env: map[string]string{"HOME": home}}, "q")
	if r.code != 0 || !strings.Contains(r.stderr, "holds an API key and others can read it: chmod 600") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	if quiet := runAsk(t, askEnv{env: map[string]string{"HOME": home}}, "-q", "q"); quiet.stderr != "" {
		t.Errorf("--quiet still warns: %q", quiet.stderr)
	}
}

// TestMainFlag checks the flags read before urfave/cli runs (the profile
// chooses the config file's settings): the last one wins, "--" ends the
// flags, and a subcommand's line gives the main command's flags to it.
func TestMainFlag(t *testing.T) {
	t.Parallel()
	spec := mainSpec(testIO())
	tests := []struct {
		args  []string
		value string
		found bool
	}{
		{[]string{"--profile", "ci", "x"}, "ci", true},
		{[]string{"--profile=ci", "x"}, "ci", true},
		{[]string{"-profile", "a", "--profile", "b"}, "b", true},
		{[]string{"--", "--profile", "ci"}, "", false},
		{[]string{"--profiles", "x"}, "", false},
		{[]string{"config", "--profile", "ci"}, "ci", true},
		{[]string{"tools", "run", "--profile", "ci"}, "ci", true},
	}
	for _, tt := range tests {
		line, err := readArgs(spec, tt.args)
		v, ok := line.mainFlag("profile")
		if err != nil && tt.found || v != tt.value || ok != tt.found {
			t.Errorf("mainFlag(%q) = %q, %v (%v); want %q, %v", tt.args, v, ok, err, tt.value, tt.found)
		}
	}
	// After the prompt a profile could widen what the model may do.
	if _, err := readArgs(spec, []string{"x", "--profile=ci"}); err == nil || !strings.Contains(err.Error(), "put -- before the prompt") {
		t.Errorf("--profile after the prompt: %v", err)
	}
}
