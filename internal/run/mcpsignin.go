package run

import (
	"cmp"
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/fault"
	"github.com/ask-cli/ask/internal/history"
	"github.com/ask-cli/ask/internal/mcpauth"
	"github.com/ask-cli/ask/internal/tools/mcp"
)

// signInTarget is the remote server `ask mcp login` or `logout` names:
// an mcpServers entry by name, or a URL as it is.
func signInTarget(cfg *Config, target string) (server, name string, client mcpauth.Client, err error) {
	if cfg != nil && cfg.File != nil {
		for _, sp := range cfg.mcpServers() {
			if sp.Name != target {
				continue
			}
			if !sp.Remote() {
				return "", "", client, fault.Usagef("mcp server %s is a command started here, not a server at a URL: it signs in with what its env gives it", target)
			}
			server, err := mcpauth.Canonical(sp.URL)
			if err != nil {
				return "", "", client, fault.Usagef("mcp server %s: %v", target, err)
			}
			if sp.OAuth != nil {
				client = *sp.OAuth
			}
			return server, sp.Name, client, nil
		}
	}
	if !mcp.IsURL(target) {
		return "", "", client, fault.Usagef("%q is neither a server of the config file's mcpServers nor an http:// or https:// URL (see ask mcp list)", target)
	}
	server, err = mcpauth.Canonical(target)
	if err != nil {
		return "", "", client, fault.Usagef("%v", err)
	}
	// A URL that an entry names signs in as that entry.
	if cfg != nil && cfg.File != nil {
		for _, sp := range cfg.mcpServers() {
			if u, err := mcpauth.Canonical(sp.URL); err == nil && sp.Remote() && u == server {
				if sp.OAuth != nil {
					client = *sp.OAuth
				}
				return server, sp.Name, client, nil
			}
		}
	}
	return server, "", client, nil
}

func signInStore(env Env) mcpauth.Store {
	return mcpauth.OpenStore(history.StateDir(env.Getenv))
}

// MCPLogin signs in to the remote MCP server target names (ask mcp
// login): it opens the authorization URL in a browser ($BROWSER, else the
// system's opener), prints it on env.Notes too, and keeps the grant in the
// state directory. idToken, when given, is an ID token from the identity
// provider of a server signed in to through one (oauth idp_issuer): no
// browser is opened then.
func MCPLogin(ctx context.Context, cfg *Config, env Env, target, idToken string) (*mcpauth.Grant, error) {
	server, name, client, err := signInTarget(cfg, target)
	if err != nil {
		return nil, err
	}
	label := cmp.Or(name, server)
	if why := client.Check(); why != "" {
		return nil, fault.Usagef("mcp server %s: oauth: %s", label, why)
	}
	if idToken != "" {
		if !client.Enterprise() {
			return nil, fault.Usagef("mcp server %s signs in without an identity provider: an ID token goes only with its oauth idp_issuer", label)
		}
		if err := mcpauth.CheckIDToken(idToken, time.Now()); err != nil {
			return nil, fault.Usagef("%v", err)
		}
	}
	getenv := env.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if client, err = mcp.ExpandOAuth(client, getenv); err != nil {
		return nil, fault.Usagef("mcp server %s: %v", label, err)
	}
	transport := http.DefaultTransport
	if env.HTTP != nil && env.HTTP.Transport != nil {
		transport = env.HTTP.Transport
	}
	l := mcpauth.Login{Server: server, Name: name, Client: client, Notes: env.Notes, Version: env.Version, IDToken: idToken,
		HTTP: &http.Client{Transport: transport, Timeout: 30 * time.Second},
		Open: func(u string) error { return mcpauth.OpenBrowser(getenv, u) }}
	g, err := l.Run(ctx, signInStore(env))
	if err != nil {
		return nil, fault.New(fault.Auth, err)
	}
	return g, nil
}

// MCPLogout forgets the sign-in kept for the server target names; it
// reports whether there was one.
func MCPLogout(cfg *Config, env Env, target string) (string, bool, error) {
	server, name, _, err := signInTarget(cfg, target)
	if err != nil {
		return "", false, err
	}
	had, err := signInStore(env).Remove(server)
	return cmp.Or(name, server), had, err
}

// signInState is what `ask mcp list` says of a remote server's sign-in:
// "signed in", "login needed" (the config gives an oauth client but
// nothing is kept), or "" where the server wants none that ask knows of.
func signInState(store mcpauth.Store, sp mcp.Server) string {
	if !sp.Remote() {
		return ""
	}
	for k := range sp.Headers {
		if strings.EqualFold(k, "Authorization") {
			return ""
		}
	}
	if sp.OAuth != nil && sp.OAuth.Machine() {
		return "client credentials"
	}
	server, err := mcpauth.Canonical(sp.URL)
	if err != nil {
		return ""
	}
	if g, err := store.Load(server); err == nil && g != nil {
		return "signed in"
	}
	if sp.OAuth != nil {
		return "login needed"
	}
	return ""
}
