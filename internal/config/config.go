// Package config reads ask's configuration file: defaults for the
// provider, model, mode, tools and limits, per-provider settings, MCP
// servers and named profiles. Flags and environment variables win over it
// (cmd/ask applies that order); this package only reads, checks and merges
// the file.
//
// The file is JSON, decoded strictly: an unknown or repeated key, a value of
// the wrong type or a malformed document is an error naming the file, line
// and column. A missing file is not an error, and an empty one (such as
// /dev/null) holds no settings.
//
//	{
//	  "provider": "anthropic",
//	  "model": "claude-sonnet-4-5",
//	  "mode": "agent",
//	  "max_steps": 12,
//	  "timeout": "10m",
//	  "retries": 3,
//	  "providers": {
//	    "openai": {"base_url": "https://proxy.example/v1", "key_env": "WORK_OPENAI_KEY", "model": "gpt-4.1"}
//	  },
//	  "tools": {"allow": ["read_file", "shell:git status*"], "deny": ["shell:rm *"]},
//	  "mcp": ["npx -y @modelcontextprotocol/server-filesystem ."],
//	  "mcpServers": {
//	    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
//	    "linear": {"url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer ${LINEAR_TOKEN}"}}
//	  },
//	  "hooks": {
//	    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "~/bin/guard", "timeout": 10}]}]
//	  },
//	  "prices": {"my-model": {"input": 0.5, "output": 1.5}},
//	  "profiles": {
//	    "ci": {"mode": "ask", "safe": true, "no_stream": true}
//	  }
//	}
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/ask-cli/ask/internal/hooks"
	"github.com/ask-cli/ask/internal/settings"
)

// Layer is one layer of the file: the top level, or a profile. Values
// holds the settings the rows of package settings declare, by config key
// ("max_steps", "tools.allow"), each of its row's kind (a timeout as a
// time.Duration).
type Layer struct {
	Values    map[string]any
	Providers map[string]Provider
	// Aliases are short names for models: --model fast means Aliases["fast"].
	Aliases map[string]string
}

// Provider is the file's settings for one provider.
type Provider struct {
	BaseURL string `json:"base_url"`
	// KeyEnv names the environment variable holding the key, in place of
	// the provider's usual one. It is a name, never a key.
	KeyEnv string `json:"key_env"`
	// APIKey is used when the key variable is unset. It is a Secret so that
	// printing a Provider never shows it.
	APIKey Secret `json:"api_key"`
	// Model is the default model for this provider.
	Model string `json:"model"`
}

// Secret is a value that must never be shown: it prints as "[redacted]".
type Secret string

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "[redacted]"
}

// GoString keeps %#v from showing the value too.
func (s Secret) GoString() string { return s.String() }

// MarshalJSON keeps encoded settings free of the value.
func (s Secret) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// Reveal returns the value, for the one place that sends it.
func (s Secret) Reveal() string { return string(s) }

// Valid values of the settings that have a fixed set (DESIGN §4).
var (
	Modes           = settings.Modes
	ToolProtocols   = settings.ToolProtocols
	Colors          = settings.Colors
	ReasoningLevels = settings.ReasoningLevels
)

// MCPServer is one entry of "mcpServers", in the shape other MCP clients
// write (Claude Desktop's claude_desktop_config.json, Cursor's mcp.json),
// so that a block pastes as it is: a local server is command, args and
// env; a remote one is url and headers. Values of env and headers may name
// environment variables as ${NAME} or ${env:NAME}. Disabled and Sandbox
// are ask's own: leave the server out, start it inside the run's sandbox.
type MCPServer struct {
	Command  string            `json:"command"`
	Args     []string          `json:"args"`
	Env      map[string]string `json:"env"`
	URL      string            `json:"url"`
	Headers  map[string]string `json:"headers"`
	Type     string            `json:"type"`
	Disabled bool              `json:"disabled"`
	Sandbox  bool              `json:"sandbox"`
	// OAuth says how ask signs in to a remote server (ask mcp login):
	// a client registered beforehand, or client credentials for a
	// machine with no person to sign in.
	OAuth *MCPOAuth `json:"oauth"`

	// Keys other clients write, accepted so that their blocks paste as
	// they are. ServerURL, Cwd and DisabledTools mean what they mean there
	// and are honoured; the rest are read and ignored, with a warning
	// (Ignored).
	ServerURL     string   `json:"serverUrl"`     // Windsurf's url
	Cwd           string   `json:"cwd"`           // Roo Code, Claude Code
	DisabledTools []string `json:"disabledTools"` // Roo Code
	AutoApprove   []string `json:"autoApprove"`   // Cline
	AlwaysAllow   []string `json:"alwaysAllow"`   // Roo Code, Kilo Code
	Timeout       float64  `json:"timeout"`       // Cline and Roo in seconds, Claude Code in ms
	TransportType string   `json:"transportType"` // Cline
	Description   string   `json:"description"`
	EnvFile       string   `json:"envFile"`    // VS Code, Cursor
	WatchPaths    []string `json:"watchPaths"` // Roo Code

	// Ignored says, a line for each, which of those keys the file gives
	// that ask does not act on, and why.
	Ignored []string `json:"-"`
}

// foreignKeys are the keys of other clients' mcpServers entries that ask
// reads but does not act on, with what to do instead (%s is the server's
// name).
var foreignKeys = []struct{ key, client, instead string }{
	{"autoApprove", "Cline's", `approve its tools with tools.allow, such as ["%s__*"], or --allow-tool`},
	{"alwaysAllow", "Roo Code's", `approve its tools with tools.allow, such as ["%s__*"], or --allow-tool`},
	{"timeout", "another client's", "--timeout bounds the whole run, calls included"},
	{"transportType", "Cline's", "ask takes the transport from command or url (and type)"},
	{"description", "another client's", "it is not shown"},
	{"envFile", "another client's", "name the variables in env, as ${NAME}"},
	{"watchPaths", "Roo Code's", "a server is started once per run"},
}

// MCPTypes are the values "type" takes: stdio for a command, the rest for
// a URL ("http" and "streamable-http" are streamable HTTP only, "sse" the
// older SSE transport only; without a type a URL tries both).
var MCPTypes = []string{"stdio", "http", "streamable-http", "sse"}

// File is a parsed config file.
type File struct {
	Layer
	Profiles map[string]Layer
	// MCPServers are the servers every run starts (unless disabled), by
	// name. They belong to the top level only: a profile cannot hold them.
	MCPServers map[string]MCPServer
	// Hooks are the programs run at points of every run, in Claude Code's
	// format. Top level only: a profile may be chosen by $ASK_PROFILE,
	// which the environment a run starts in can set, and must not swap
	// the guards the user put on every tool call.
	Hooks hooks.Config
	// Prices are what models cost, by model name, for --max-budget-usd
	// when the provider reports no cost.
	Prices map[string]Price

	path  string
	found bool
	// keys holds the position of every key in the file, by its dotted path
	// ("tools.allow", "profiles.ci.mode"): a key that is present is set,
	// even to false or 0, and errors can point at it.
	keys map[string]position
}

// Price is a model's price in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
}

// Path returns the config file to read: $ASK_CONFIG, else
// $XDG_CONFIG_HOME/ask/config.json, else ~/.config/ask/config.json. It is
// "" when none can be named (no HOME).
func Path(getenv func(string) string) string {
	if p := getenv("ASK_CONFIG"); p != "" {
		return p
	}
	// The XDG spec says a relative XDG_CONFIG_HOME is invalid and ignored.
	if dir := getenv("XDG_CONFIG_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "ask", "config.json")
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".config", "ask", "config.json")
	}
	return ""
}

// Load reads and checks the file at path. A missing file gives an empty
// File, unless mustExist (the user named it in $ASK_CONFIG). providers are
// the provider names the file may use; nil accepts any.
func Load(path string, mustExist bool, providers []string) (*File, error) {
	if path == "" {
		return &File{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !mustExist {
		return &File{path: path}, nil
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		msg := "cannot be read: " + err.Error()
		if mustExist {
			msg += " (ASK_CONFIG names it)"
		}
		return nil, &Error{File: path, Msg: msg}
	}
	f, err := Parse(path, data, providers)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Parse decodes and checks a config file's contents; name is used in
// errors.
func Parse(name string, data []byte, providers []string) (*File, error) {
	f := &File{path: name, found: true}
	if strings.TrimSpace(string(data)) == "" {
		return f, nil
	}
	if err := decodeStrict(name, data, f); err != nil {
		return nil, err
	}
	if err := f.check(providers); err != nil {
		return nil, err
	}
	return f, nil
}

// Name is the file's path, "" when there is none.
func (f *File) Name() string { return f.path }

// Found reports whether the file exists.
func (f *File) Found() bool { return f.found }

// ProfileNames lists the profiles, sorted.
func (f *File) ProfileNames() []string {
	var names []string
	for n := range f.Profiles {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// check validates values that JSON types cannot: names from a fixed set,
// durations, counts, variable names.
func (f *File) check(providers []string) error {
	if err := f.checkLayer("", f.Layer, providers); err != nil {
		return err
	}
	if err := f.checkMCPServers(); err != nil {
		return err
	}
	if event, msg := f.Hooks.Check(); msg != "" {
		return f.errorAt("hooks."+event, msg)
	}
	for _, model := range sortedKeys(f.Prices) {
		if p := f.Prices[model]; p.Input < 0 || p.Output < 0 || !f.has("prices."+model+".input") || !f.has("prices."+model+".output") {
			return f.errorAt("prices."+model, `give "input" and "output", each in US dollars per million tokens, 0 or more`)
		}
	}
	for _, name := range f.ProfileNames() {
		if name == "" {
			return f.errorAt("profiles", "a profile needs a name")
		}
		if err := f.checkLayer("profiles."+name+".", f.Profiles[name], providers); err != nil {
			return err
		}
	}
	return nil
}

// checkLayer checks each value against its row, and the providers and
// aliases, naming keys with prefix ("profiles.ci.").
func (f *File) checkLayer(prefix string, l Layer, providers []string) error {
	for _, r := range settings.Rows() {
		v, ok := l.Values[r.Key]
		if r.Key == "" || !ok {
			continue
		}
		if msg := r.Check(v); msg != "" {
			return f.errorAt(prefix+r.Key, msg)
		}
	}
	if p, ok := l.Values["provider"].(string); ok && providers != nil && !contains(providers, p) {
		return f.errorAt(prefix+"provider", fmt.Sprintf("%q: choose %s", p, orList(providers)))
	}
	for _, name := range sortedKeys(l.Providers) {
		key := prefix + "providers." + name
		if providers != nil && !contains(providers, name) {
			return f.errorAt(key, fmt.Sprintf("unknown provider %q: choose %s", name, orList(providers)))
		}
		p := l.Providers[name]
		// The value is never echoed: a key pasted here by mistake must not
		// end up in an error message or a CI log.
		if f.has(key+".key_env") && !syntax.ValidName(p.KeyEnv) {
			return f.errorAt(key+".key_env", "must be the name of an environment variable (letters, digits and _), not a key: put the key in that variable")
		}
	}
	for _, name := range sortedKeys(l.Aliases) {
		switch {
		case strings.TrimSpace(name) == "":
			return f.errorAt(prefix+"aliases", "an alias needs a name")
		case strings.TrimSpace(l.Aliases[name]) == "":
			return f.errorAt(prefix+"aliases."+name, "is empty: name the model it stands for")
		}
	}
	return nil
}

// MCPServerNames lists the servers of mcpServers, sorted.
func (f *File) MCPServerNames() []string { return sortedKeys(f.MCPServers) }

// MCPOAuth is an mcpServers entry's oauth object.
type MCPOAuth struct {
	ClientID          string   `json:"client_id"`
	ClientSecret      string   `json:"client_secret"`
	Scopes            []string `json:"scopes"`
	ClientMetadataURL string   `json:"client_metadata_url"`
	GrantType         string   `json:"grant_type"`
	// PrivateKeyFile is a PEM private key's path (never the key): with
	// client_credentials, the client authenticates with a JWT it signs.
	PrivateKeyFile   string `json:"private_key_file"`
	SigningAlgorithm string `json:"signing_algorithm"`
	// IdPIssuer is an enterprise identity provider's issuer URL: the
	// server is signed in to through it (enterprise-managed
	// authorization), with ask's client there, IdPClientID and
	// IdPClientSecret (a ${VAR}, as client_secret may be).
	IdPIssuer       string `json:"idp_issuer"`
	IdPClientID     string `json:"idp_client_id"`
	IdPClientSecret string `json:"idp_client_secret"`
}

// MCPSigningAlgorithms are the algorithms a client assertion may be
// signed with.
var MCPSigningAlgorithms = []string{"ES256", "RS256"}

// MCPGrantTypes are the OAuth grants an mcpServers entry may name.
var MCPGrantTypes = []string{"authorization_code", "client_credentials"}

// check says what is wrong with o, with the key it is about ("" for the
// object itself); "" when nothing is.
func (o *MCPOAuth) check() (key, why string) {
	switch {
	case o.GrantType != "" && !contains(MCPGrantTypes, o.GrantType):
		return "grant_type", fmt.Sprintf("%q: choose %s", o.GrantType, orList(MCPGrantTypes))
	case o.GrantType == "client_credentials" && (o.ClientID == "" || (o.ClientSecret == "") == (o.PrivateKeyFile == "")):
		return "", "client_credentials needs client_id and one of client_secret and private_key_file"
	case o.PrivateKeyFile != "" && o.GrantType != "client_credentials":
		return "private_key_file", `goes only with grant_type "client_credentials"`
	case o.SigningAlgorithm != "" && o.PrivateKeyFile == "":
		return "signing_algorithm", "needs private_key_file beside it"
	case o.SigningAlgorithm != "" && !contains(MCPSigningAlgorithms, o.SigningAlgorithm):
		return "signing_algorithm", fmt.Sprintf("%q: choose %s", o.SigningAlgorithm, orList(MCPSigningAlgorithms))
	case o.ClientSecret != "" && o.ClientID == "":
		return "client_secret", "needs client_id beside it"
	case o.ClientMetadataURL != "" && !strings.HasPrefix(o.ClientMetadataURL, "https://"):
		return "client_metadata_url", "must be an https:// URL"
	case o.IdPIssuer == "" && o.IdPClientID != "":
		return "idp_client_id", "needs idp_issuer beside it"
	case o.IdPIssuer == "" && o.IdPClientSecret != "":
		return "idp_client_secret", "needs idp_issuer beside it"
	case o.IdPIssuer == "":
		return "", ""
	case o.GrantType != "":
		return "grant_type", "goes not with idp_issuer: a server signed in to through an identity provider takes no grant_type"
	case o.ClientID == "" || o.IdPClientID == "":
		return "", "idp_issuer needs client_id (ask's client at the server's authorization server) and idp_client_id (at the identity provider)"
	case o.ClientMetadataURL != "":
		return "client_metadata_url", "goes not with idp_issuer: give client_id"
	}
	if u, err := url.Parse(o.IdPIssuer); err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" ||
		u.Scheme != "https" && (u.Scheme != "http" || !loopbackHost(u.Hostname())) {
		return "idp_issuer", "must be the identity provider's issuer: an https:// URL (http:// only on a loopback address)"
	}
	return "", ""
}

func loopbackHost(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}

// checkMCPServers checks each server of mcpServers: a command or a URL,
// never both, and only the keys that go with it.
func (f *File) checkMCPServers() error {
	for _, name := range f.MCPServerNames() {
		key := "mcpServers." + name
		if strings.TrimSpace(name) == "" {
			return f.errorAt(key, "a server needs a name")
		}
		s := f.MCPServers[name]
		// Windsurf writes a remote server's URL as serverUrl.
		urlKey := key + ".url"
		if f.has(key + ".serverUrl") {
			if f.has(urlKey) {
				return f.errorAt(key+".serverUrl", "Windsurf's name for url: give one of them")
			}
			urlKey, s.URL = key+".serverUrl", s.ServerURL
			f.MCPServers[name] = s
		}
		local, remote := f.has(key+".command"), f.has(urlKey)
		switch {
		case local && remote:
			return f.errorAt(urlKey, "a server has a command (started here) or a url (reached over HTTP), not both")
		case !local && !remote:
			return f.errorAt(key, "give command (and args) to start a local server, or url for a remote one")
		case local && strings.TrimSpace(s.Command) == "":
			return f.errorAt(key+".command", "is empty: name the program that starts the server")
		}
		if f.has(key + ".type") {
			if !contains(MCPTypes, s.Type) {
				return f.errorAt(key+".type", fmt.Sprintf("%q: choose %s", s.Type, orList(MCPTypes)))
			}
			if (s.Type == "stdio") != local {
				return f.errorAt(key+".type", fmt.Sprintf("%q does not go with a %s", s.Type, map[bool]string{true: "command", false: "url"}[local]))
			}
		}
		s.Ignored = nil
		for _, fk := range foreignKeys {
			if f.has(key + "." + fk.key) {
				s.Ignored = append(s.Ignored, fmt.Sprintf("%s: %s key, ignored by ask (%s)", f.placed(key+"."+fk.key), fk.client, strings.ReplaceAll(fk.instead, "%s", name)))
			}
		}
		f.MCPServers[name] = s
		if s.OAuth != nil {
			if local {
				return f.errorAt(key+".oauth", "belongs to a server reached at a url; a command's server takes its credentials in env")
			}
			if k, why := s.OAuth.check(); why != "" {
				at := key + ".oauth"
				if k != "" {
					at += "." + k
				}
				return f.errorAt(at, why)
			}
		}
		if remote && f.has(key+".cwd") {
			return f.errorAt(key+".cwd", "belongs to a server started with command; a url server is reached over HTTP")
		}
		for _, k := range []string{"args", "env", "sandbox"} {
			if remote && f.has(key+"."+k) {
				return f.errorAt(key+"."+k, "belongs to a server started with command; a url server is reached over HTTP")
			}
		}
		if local && f.has(key+".headers") {
			return f.errorAt(key+".headers", "belongs to a url server; give a command's credentials in env")
		}
		if remote {
			if msg := checkMCPURL(s.URL); msg != "" {
				return f.errorAt(urlKey, msg)
			}
		}
		for _, v := range sortedKeys(s.Env) {
			if !syntax.ValidName(v) {
				return f.errorAt(key+".env."+v, "is not a variable name (letters, digits and _)")
			}
		}
		for _, h := range sortedKeys(s.Headers) {
			if !isHeaderName(h) {
				return f.errorAt(key+".headers."+h, "is not a header name")
			}
		}
	}
	return nil
}

// checkMCPURL is "" for an http or https URL without a password, else
// what is wrong. The URL itself is not repeated: it may hold a secret.
func checkMCPURL(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return "give an http:// or https:// URL"
	}
	if _, set := u.User.Password(); set {
		return "holds a password: put the credential in headers, as \"Authorization\": \"Bearer ${TOKEN}\" with TOKEN set in the environment"
	}
	return ""
}

// isHeaderName accepts an HTTP field name (RFC 9110 token characters).
func isHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return s != ""
}

// placed is where a key is, "FILE:LINE:COL: KEY", for a warning.
func (f *File) placed(key string) string {
	e := f.errorAt(key, "").(*Error)
	return strings.TrimSuffix(e.Error(), ": ")
}

// has reports whether the file holds the key.
func (f *File) has(key string) bool {
	_, ok := f.keys[key]
	return ok
}

func orList(values []string) string { return settings.OrList(values) }

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
