package run

import (
	"maps"
	"slices"
	"strings"

	"github.com/ask-cli/ask/internal/config"
	"github.com/ask-cli/ask/internal/mcpauth"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/settings"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// Config is the config file as it applies to one invocation: the file,
// the profile chosen, and the settings they give.
type Config struct {
	Path     string
	File     *config.File
	Resolved *config.Resolved // nil when Err is set
	// Err is a broken file or an unknown profile. It is reported by
	// Resolve, so that commands needing no settings (--help, completion)
	// still work.
	Err     error
	Profile Setting[string]
	home    string
}

// LoadConfig reads the config file ($ASK_CONFIG, else the XDG location)
// with the profile named by the --profile flag ("" when not given), else
// $ASK_PROFILE.
func LoadConfig(getenv func(string) string, profileFlag string) *Config {
	c := &Config{Path: config.Path(getenv), home: getenv("HOME")}
	switch {
	case profileFlag != "":
		c.Profile = Given(profileFlag, "flag --profile")
	case getenv("ASK_PROFILE") != "":
		c.Profile = Given(getenv("ASK_PROFILE"), "env ASK_PROFILE")
	}
	c.File, c.Err = config.Load(c.Path, getenv("ASK_CONFIG") != "", catalog.Names())
	if c.Err == nil {
		c.Resolved, c.Err = c.File.Resolve(c.Profile.Value)
	}
	return c
}

// emptyConfig is no config file at all.
func emptyConfig() *Config {
	f := &config.File{}
	r, _ := f.Resolve("")
	return &Config{File: f, Resolved: r}
}

// Found reports whether the file exists.
func (c *Config) Found() bool { return c.File != nil && c.File.Found() }

// Shown names the config file as `ask config` does: its path, marked when
// there is no file there, or why there is no path.
func (c *Config) Shown() string {
	switch {
	case c.Path == "":
		return "none (set HOME or ASK_CONFIG)"
	case !c.Found():
		return c.Path + " (not found)"
	}
	return c.Path
}

func (c *Config) source(key string) string { return "config " + c.Resolved.Source(key) }

// coverWithFile lays over s what the file says about the settings that
// are not bound to one provider: its top level's layer, then its
// profile's. The file's reader checked each value against its row, where
// it was written.
func (c *Config) coverWithFile(s *Settings) error {
	r := c.Resolved
	for _, l := range r.Layers() {
		var layer Settings
		for _, row := range settings.Rows() {
			v, ok := l.Values[row.Key]
			if row.Key == "" || row.Bound || !ok {
				continue
			}
			if row.Name == "tools-file" {
				v = r.Path(v.(string), c.home)
			}
			if err := layer.Values.Give(row.Name, v, "config "+l.Source); err != nil {
				return asKind(Usage, err)
			}
		}
		s.cover(&layer)
	}
	if servers := c.mcpServers(); len(servers) > 0 {
		s.MCPServers = Given(servers, "config "+c.File.Name())
	}
	if len(c.File.Hooks) > 0 {
		s.Hooks = Given(c.File.Hooks, "config "+c.File.Name())
	}
	if len(c.File.Prices) > 0 {
		s.Prices = Given(c.File.Prices, "config "+c.File.Name())
	}
	return nil
}

// provider is the catalog's row for a provider with the file's settings
// for it: its base URL becomes the default, its key_env replaces the key
// variables.
func (c *Config) provider(name string) (catalog.Provider, error) {
	p, err := catalog.Lookup(name)
	if err != nil {
		return p, asKind(Usage, err)
	}
	ps := c.Resolved.Providers[p.Name]
	if ps.KeyEnv != "" {
		p.KeyEnv = []string{ps.KeyEnv}
	}
	return p, nil
}

// model is the file's model for a provider, not given when it names none.
func (c *Config) model(provider string) Setting[string] {
	m, key := c.Resolved.ModelFor(provider)
	if m == "" {
		return Setting[string]{}
	}
	return Given(m, c.source(key))
}

// aliases are the file's model aliases, with the file (and profile) they
// come from.
func (c *Config) aliases() Setting[map[string]string] {
	r := c.Resolved
	if len(r.Aliases) == 0 {
		return Setting[map[string]string]{}
	}
	var sources []string
	for _, name := range slices.Sorted(maps.Keys(r.Aliases)) {
		if src := c.source("aliases." + name); !slices.Contains(sources, src) {
			sources = append(sources, src)
		}
	}
	return Given(maps.Clone(r.Aliases), strings.Join(sources, ", "))
}

// baseURL is the file's base URL for a provider.
func (c *Config) baseURL(provider string) Setting[string] {
	u := c.Resolved.Providers[provider].BaseURL
	if u == "" {
		return Setting[string]{}
	}
	return Given(u, c.source("providers."+provider+".base_url"))
}

// apiKey is the file's key for a provider and where it is.
func (c *Config) apiKey(provider string) (config.Secret, string) {
	k := config.Secret(strings.TrimSpace(c.Resolved.Providers[provider].APIKey.Reveal()))
	if k == "" {
		return "", ""
	}
	return k, c.source("providers." + provider + ".api_key")
}

// mcpServers are the file's mcpServers that are not disabled, in name
// order. They are optional: one that cannot start is left out with a
// warning, as other MCP clients do, since this run did not name it.
// oauthClient is the sign-in client of a config's oauth object.
func oauthClient(o *config.MCPOAuth) *mcpauth.Client {
	if o == nil {
		return nil
	}
	return &mcpauth.Client{ClientID: o.ClientID, ClientSecret: o.ClientSecret, Scopes: o.Scopes,
		MetadataURL: o.ClientMetadataURL, GrantType: o.GrantType,
		PrivateKeyFile: o.PrivateKeyFile, SigningAlgorithm: o.SigningAlgorithm,
		IdPIssuer: o.IdPIssuer, IdPClientID: o.IdPClientID, IdPClientSecret: o.IdPClientSecret}
}

func (c *Config) mcpServers() []mcp.Server {
	f := c.File
	var out []mcp.Server
	for _, name := range f.MCPServerNames() {
		s := f.MCPServers[name]
		if s.Disabled {
			continue
		}
		transport := ""
		switch s.Type {
		case "http", "streamable-http":
			transport = "http"
		case "sse":
			transport = "sse"
		}
		var argv []string
		if s.Command != "" {
			argv = append([]string{s.Command}, s.Args...)
		}
		out = append(out, mcp.Server{
			Name: name, Argv: argv, Env: s.Env, URL: s.URL, Headers: s.Headers, Transport: transport,
			Sandbox: s.Sandbox, Optional: true, Origin: "MCP server " + name + " (config mcpServers)",
			Dir: s.Cwd, DisabledTools: s.DisabledTools, Notes: s.Ignored, OAuth: oauthClient(s.OAuth),
		})
	}
	return out
}
