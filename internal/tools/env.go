package tools

import (
	"maps"
	"os"
	"slices"
	"strings"
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
	env := slices.DeleteFunc(ChildEnv(os.Environ()), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		_, overridden := noTerminal[name]
		return overridden || slices.Contains(r.scrub, name)
	})
	for _, name := range slices.Sorted(maps.Keys(noTerminal)) {
		env = append(env, name+"="+noTerminal[name])
	}
	return env
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
