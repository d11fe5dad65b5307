package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/ask-cli/ask/internal/providers/catalog"
)

// setting is one effective setting and where it came from: "flag --NAME",
// "env VAR", "config FILE[:PROFILE]" or "default".
type setting struct {
	name   string
	value  any // nil when there is none
	source string
}

// effectiveSettings resolves every setting the main command takes from
// the config file, exactly as buildSession does, with its source. Keys
// appear only as set or unset.
func effectiveSettings(c *cli.Context, stdio *IO) ([]setting, error) {
	rc, err := sessionConfig(c, stdio)
	if err != nil {
		return nil, err
	}
	st, r, getenv := rc.st, rc.r, stdio.Getenv
	fromFile := func(key string) string { return "config " + r.Source(key) }
	var out []setting
	add := func(name string, value any, source string) { out = append(out, setting{name, value, source}) }

	add("profile", nilIfEmpty(st.profile), firstNonEmpty(st.profileSource, "default"))

	prov, err := catalog.Select(c.String("provider"), rc.providerName(), getenv)
	if err != nil {
		return nil, withCode(exitUsage, err)
	}
	var src string
	switch {
	case c.String("provider") != "":
		src = "flag --provider"
	case getenv("ASK_PROVIDER") != "":
		src = "env ASK_PROVIDER"
	case rc.providerName() != "":
		src = fromFile("provider")
	default:
		src = autoProviderSource(getenv)
	}
	add("provider", prov.Name, src)
	prov = rc.configure(prov)

	model, modelKey := r.ModelFor(prov.Name)
	switch {
	case c.String("model") != "":
		add("model", c.String("model"), "flag --model")
	case getenv("ASK_MODEL") != "":
		add("model", getenv("ASK_MODEL"), "env ASK_MODEL")
	case model != "":
		add("model", model, fromFile(modelKey))
	case prov.DefaultModel != "":
		add("model", prov.DefaultModel, "default")
	default:
		add("model", nil, "none: name one with --model")
	}

	value, src := baseURLSource(c, rc, prov)
	add("base-url", value, src)
	value, src = keySource(rc, prov)
	add("key", value, src)

	for _, cf := range configFlags {
		f := findFlag(c.App.Flags, cf.flag)
		if f == nil {
			continue
		}
		src := "default"
		switch {
		case c.IsSet(cf.flag):
			src = "flag --" + cf.flag
		case st.appliedToFlags[cf.flag] != "":
			src = fromFile(cf.key)
		}
		add(cf.flag, flagValue(c, f, cf.flag), src)
	}
	add("color", st.color.mode, st.color.source)
	return out, nil
}

// autoProviderSource explains a provider chosen by the keys that are set.
func autoProviderSource(getenv func(string) string) string {
	for _, p := range catalog.All() {
		for _, v := range p.KeyEnv {
			if getenv(v) != "" {
				return "default: the first provider whose key is set (" + v + ")"
			}
		}
	}
	return "default: no key variable is set"
}

func baseURLSource(c *cli.Context, rc *runConfig, prov catalog.Provider) (any, string) {
	getenv := rc.stdio.Getenv
	if prov.Protocol == "command" {
		return nil, "not used by a command model"
	}
	value := prov.ResolveBaseURL(c.String("base-url"), getenv)
	switch {
	case c.String("base-url") != "":
		return value, "flag --base-url"
	case getenv("ASK_BASE_URL") != "":
		return value, "env ASK_BASE_URL"
	}
	for _, v := range prov.BaseURLEnv {
		if getenv(v) != "" {
			return value, "env " + v
		}
	}
	if rc.r.Providers[prov.Name].BaseURL != "" {
		return value, "config " + rc.r.Source("providers."+prov.Name+".base_url")
	}
	return value, "default"
}

// keySource says whether the provider's key is set and where, never what
// it is.
func keySource(rc *runConfig, prov catalog.Provider) (any, string) {
	for _, v := range prov.KeyEnv {
		if strings.TrimSpace(rc.stdio.Getenv(v)) != "" {
			return "set", "env " + v
		}
	}
	if rc.r.Providers[prov.Name].APIKey != "" {
		return "set", "config " + rc.r.Source("providers."+prov.Name+".api_key")
	}
	if prov.NeedsKey() {
		return "unset", "needed: set " + strings.Join(prov.KeyEnv, " or ")
	}
	return "unset", "not needed"
}

// flagValue reads a flag of the main command as its type.
func flagValue(c *cli.Context, f cli.Flag, name string) any {
	switch f.(type) {
	case *cli.StringFlag:
		return nilIfEmpty(c.String(name))
	case *cli.BoolFlag:
		return c.Bool(name)
	case *cli.IntFlag:
		return c.Int(name)
	case *cli.DurationFlag:
		return c.Duration(name).String()
	case *cli.StringSliceFlag:
		if l := c.StringSlice(name); l != nil {
			return l
		}
		return []string{}
	}
	return c.Value(name)
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
