package tools

import (
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"unicode"
)

// providerKeys are the credentials ask itself reads (DESIGN.md §3). They are
// also caught by the _API_KEY rule below; the list documents intent.
var providerKeys = map[string]bool{
	"OPENROUTER_API_KEY": true,
	"OPENAI_API_KEY":     true,
	"ANTHROPIC_API_KEY":  true,
	"GEMINI_API_KEY":     true,
	"GOOGLE_API_KEY":     true,
	"DEEPSEEK_API_KEY":   true,
	"MOONSHOT_API_KEY":   true,
	"OLLAMA_API_KEY":     true,
}

// ChildEnv returns environ without credentials, for processes the model can
// run (shell, user tools, MCP servers). A variable is dropped when its name,
// compared in upper case,
//   - is one of the provider keys (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...),
//   - ends in _API_KEY or _TOKEN (GITHUB_TOKEN, HF_TOKEN, ...), or
//   - contains SECRET or PASSWORD (AWS_SECRET_ACCESS_KEY, PGPASSWORD, ...).
//
// Everything else, PATH and HOME included, is kept in order. Entries without
// "=" are kept as they are.
func ChildEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if isCredential(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func isCredential(name string) bool {
	upper := strings.ToUpper(name)
	return providerKeys[upper] ||
		strings.HasSuffix(upper, "_API_KEY") ||
		strings.HasSuffix(upper, "_TOKEN") ||
		strings.Contains(upper, "SECRET") ||
		strings.Contains(upper, "PASSWORD")
}

// Scrub names variables to keep from every process the tools start, on
// top of ChildEnv's: the ones ask read its key from, whatever they are
// called (a config file's key_env may name any variable).
func (r *Root) Scrub(names ...string) { r.scrub = append(r.scrub, names...) }

// ChildEnv is ask's environment as the processes the tools start get it:
// without credentials (ChildEnv) and without the variables Scrub named,
// and with nothing that waits on a terminal (noTerminal).
func (r *Root) ChildEnv() []string {
	environ := os.Environ
	if r.Environ != nil {
		environ = r.Environ
	}
	env := slices.DeleteFunc(ChildEnv(environ()), func(kv string) bool {
		name, value, _ := strings.Cut(kv, "=")
		_, overridden := noTerminal[name]
		if r.keepOnly && (!slices.Contains(r.keep, name) && !BuildVar(name, value) || len(Passwords(value)) > 0) {
			return true
		}
		return overridden || slices.Contains(r.scrub, name)
	})
	for _, name := range slices.Sorted(maps.Keys(noTerminal)) {
		env = append(env, name+"="+noTerminal[name])
	}
	return env
}

// KeepOnly narrows the tools' environment to what a build needs
// (BuildVar) and the variables named (--safe, with the config file's
// sandbox.env).
func (r *Root) KeepOnly(names ...string) {
	r.keepOnly = true
	r.keep = append(r.keep, names...)
}

// buildVars are the variables a build or a test needs, by name; buildPrefixes
// by the start of the name.
var (
	buildVars = []string{
		"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "PWD", "CI",
		"TMPDIR", "TEMP", "TMP", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR",
		"GOPATH", "GOROOT", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB", "GOTOOLCHAIN",
		"GOCACHE", "GOMODCACHE", "GOTMPDIR", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOEXPERIMENT", "GOWORK",
		"GOTELEMETRY", "GODEBUG", "GOMAXPROCS", "CGO_ENABLED", "CGO_CFLAGS", "CGO_LDFLAGS",
		"CC", "CXX", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAKEFLAGS", "PKG_CONFIG_PATH",
		"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "CARGO_TARGET_DIR",
		"JAVA_HOME", "GRADLE_USER_HOME", "MAVEN_OPTS",
		"PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "VIRTUAL_ENV", "PYENV_ROOT", "PYENV_VERSION",
		"PIP_CACHE_DIR", "NODE_PATH", "NODE_ENV", "NVM_DIR", "npm_config_cache", "NPM_CONFIG_CACHE", "YARN_CACHE_FOLDER",
		"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
	}
	buildPrefixes = []string{"LC_"}
)

// BuildVar says whether a variable is one a build needs. One whose value
// carries a password (Passwords) is not.
func BuildVar(name, value string) bool {
	if !slices.Contains(buildVars, name) && !slices.ContainsFunc(buildPrefixes, func(p string) bool { return strings.HasPrefix(name, p) }) {
		return false
	}
	return len(Passwords(value)) == 0
}

// Passwords are the passwords a variable's value carries in a URL's user
// information, in any form: the value is read as a list split on ",", "|"
// and white space (GOPROXY=https://proxy.golang.org,https://ci:PW@corp),
// and an item without a scheme as a URL all the same
// (HTTPS_PROXY=ci:PW@proxy:3128).
func Passwords(value string) []string {
	if !strings.Contains(value, "@") {
		return nil
	}
	var out []string
	items := strings.FieldsFunc(value, func(r rune) bool { return r == ',' || r == '|' || unicode.IsSpace(r) })
	for _, item := range items {
		at := strings.LastIndex(item, "@")
		if at < 0 {
			continue
		}
		// The user information runs from the scheme's "//" (or the
		// item's start) to the last "@" before the host.
		info := item[:at]
		if i := strings.Index(info, "://"); i >= 0 {
			info = info[i+3:]
		} else if i := strings.Index(info, "//"); i >= 0 {
			info = info[i+2:]
		}
		_, pw, ok := strings.Cut(info, ":")
		if !ok || pw == "" {
			continue
		}
		out = append(out, pw)
		if un, err := url.PathUnescape(pw); err == nil && un != pw {
			out = append(out, un)
		}
	}
	return out
}

// noTerminal keeps a model's commands from waiting on a terminal nobody
// watches: `git commit` without -m opens no editor (it aborts on the empty
// message), git asks for no credentials, and output is never paged.
var noTerminal = map[string]string{
	"GIT_EDITOR":          "true",
	"GIT_TERMINAL_PROMPT": "0",
	"GIT_PAGER":           "cat",
	"PAGER":               "cat",
}
