package run

import (
	"bufio"
	"encoding/base64"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/mcpauth"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/tools"
)

// Credentials are secrets a run can know of besides its own key: a config
// file's providers' key variables and keys.
type Credentials struct {
	Vars   []string // variables that hold one
	Values []string // secrets known by value (a config file's api_key)
}

// varRef is a variable named in a header or an environment value.
var varRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)
})

// proxyEnv are the variables whose URL may carry a proxy's password.
var proxyEnv = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"}

// credentials are every credential the run can know of: the variables to
// keep from the tools' processes, and the values to scrub from what the
// tools return. They are every provider's key variables (not only the
// running one's), the variables a header names, and by value the key, those variables' values, header values as
// sent (a server may echo its token), URL passwords (the base URL's, the
// MCP servers', a proxy's, any variable's) and the authorizations git's
// http.*.extraheader holds (actions/checkout leaves its token there).
func (r *Run) credentials(key string) (vars, values []string) {
	s := r.Settings
	getenv := r.env.Getenv
	vars = append(vars, r.Provider.KeyEnv...)
	for _, p := range catalog.All() {
		vars = append(vars, p.KeyEnv...)
	}
	vars = append(vars, s.Credentials.Vars...)
	var named []string // header and environment values that name variables
	for _, h := range s.MCPHeaders.Value {
		if _, v, ok := strings.Cut(h, ":"); ok {
			named = append(named, strings.TrimSpace(v))
		}
	}
	urls := []string{s.BaseURL.Value}
	for _, v := range s.MCP.Value {
		if strings.HasPrefix(v, "http://") || strings.HasPrefix(v, "https://") {
			urls = append(urls, strings.TrimSpace(v))
		}
	}
	for _, sp := range s.MCPServers.Value {
		urls = append(urls, sp.URL)
		for _, v := range sp.Headers {
			named = append(named, v)
		}
		if sp.OAuth != nil {
			// A client secret, as written or from the variable it names.
			values = append(values, sp.OAuth.ClientSecret, sp.OAuth.IdPClientSecret)
			named = append(named, sp.OAuth.ClientSecret, sp.OAuth.IdPClientSecret)
			values = append(values, privateKey(sp.OAuth.PrivateKeyFile, getenv)...)
		}
	}
	for _, v := range named {
		for _, m := range varRef().FindAllStringSubmatch(v, -1) {
			// A header naming $HOME is odd, but must not take HOME
			// from every command.
			if name := m[1] + m[2]; !tools.BuildVar(name, "") {
				vars = append(vars, name)
			}
		}
		expanded := os.Expand(v, getenv)
		if expanded != v {
			values = append(values, expanded)
			values = append(values, strings.Fields(expanded)...) // the token after "Bearer"
		}
	}
	values = append(values, key)
	values = append(values, s.Credentials.Values...)
	for _, v := range vars {
		values = append(values, getenv(v))
	}
	for _, v := range proxyEnv {
		urls = append(urls, getenv(v))
	}
	// A base URL variable that carries a password is a credential too.
	baseVars := []string{"ASK_BASE_URL"}
	for _, p := range catalog.All() {
		baseVars = append(baseVars, p.BaseURLEnv...)
	}
	for _, v := range baseVars {
		if urlPassword(getenv(v)) != "" {
			vars = append(vars, v)
			urls = append(urls, getenv(v))
		}
	}
	for _, u := range urls {
		if p := urlPassword(u); p != "" {
			values = append(values, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	// A password in any variable's value, in any form (a list, a URL
	// without a scheme), which --safe keeps from the tools (tools.Passwords).
	environ := os.Environ
	if r.env.Environ != nil {
		environ = r.env.Environ
	}
	for _, kv := range environ() {
		_, v, _ := strings.Cut(kv, "=")
		for _, p := range tools.Passwords(v) {
			values = append(values, p, url.QueryEscape(p), url.PathEscape(p))
		}
	}
	values = append(values, gitAuthorizations(r.workdir, r.home())...)
	values = append(values, mcpSignIns(getenv)...)

	slices.Sort(vars)
	slices.Sort(values)
	return slices.Compact(vars), slices.DeleteFunc(slices.Compact(values), func(v string) bool { return strings.TrimSpace(v) == "" })
}

// privateKey is the content of an oauth private_key_file, the key that
// signs a client's assertions: the PEM as a whole, its body on one line,
// and each line of its body, so that no form of it reaches the model.
func privateKey(path string, getenv func(string) string) []string {
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(os.Expand(strings.ReplaceAll(path, "${env:", "${"), getenv))
	if err != nil || len(data) > 1<<20 {
		return nil
	}
	text := strings.TrimSpace(string(data))
	out := []string{text}
	var body []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "-----") || strings.Contains(line, ":") {
			continue
		}
		body = append(body, line)
		if len(line) >= 16 {
			out = append(out, line)
		}
	}
	return append(out, strings.Join(body, ""))
}

// mcpSignIns are the tokens and client secrets `ask mcp login` kept: a
// tool that reads them (the state directory is hidden only in the
// sandbox) must not hand them to the model.
func mcpSignIns(getenv func(string) string) []string {
	grants, _ := mcpauth.OpenStore(history.StateDir(getenv)).List()
	var out []string
	for _, g := range grants {
		out = append(out, g.Secrets()...)
	}
	return out
}

func urlPassword(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// gitAuthorizations are the secrets in the http.*.extraheader values of
// the repository's git config (and its submodules') and the user's: each
// value, its credential, and a basic credential decoded (user:token) with
// its token; and the passwords of remotes' URLs.
func gitAuthorizations(workdir, home string) []string {
	var files []string
	for dir := workdir; ; dir = filepath.Dir(dir) {
		if gitDir := findGitDir(dir); gitDir != "" {
			files = append(files, filepath.Join(gitDir, "config"))
			mods, _ := filepath.Glob(filepath.Join(gitDir, "modules", "*", "config"))
			files = append(files, mods...)
			break
		}
		if dir == filepath.Dir(dir) {
			break
		}
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"), filepath.Join(home, ".config", "git", "config"))
	}
	var out []string
	for _, f := range files {
		out = append(out, extraHeaders(f)...)
	}
	return out
}

// findGitDir is dir's .git directory, following a .git file's gitdir.
func findGitDir(dir string) string {
	p := filepath.Join(dir, ".git")
	info, err := os.Stat(p)
	switch {
	case err != nil:
		return ""
	case info.IsDir():
		return p
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
		g = strings.TrimSpace(g)
		if !filepath.IsAbs(g) {
			g = filepath.Join(dir, g)
		}
		return g
	}
	return ""
}

// extraHeaders reads the extraheader values, and the URL passwords, of
// one git config file.
func extraHeaders(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), "=")
		if !ok {
			continue
		}
		name, value = strings.TrimSpace(name), strings.Trim(strings.TrimSpace(value), `"`)
		if strings.EqualFold(name, "url") || strings.EqualFold(name, "pushurl") {
			// A remote's URL may carry a token as its password.
			if p := urlPassword(value); p != "" {
				out = append(out, p)
			}
			continue
		}
		if !strings.EqualFold(name, "extraheader") {
			continue
		}
		out = append(out, value)
		_, cred, _ := strings.Cut(value, ":")
		fields := strings.Fields(cred)
		if len(fields) == 0 {
			continue
		}
		token := fields[len(fields)-1]
		out = append(out, strings.TrimSpace(cred), token)
		if dec, err := base64.StdEncoding.DecodeString(token); err == nil {
			out = append(out, string(dec))
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				out = append(out, pass)
			}
		}
	}
	return out
}
