package config

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Resolved is the file as one profile sees it. The profile is a layer
// over the top level's: a run lays each over the other with its other
// layers (Layers). The providers' sections merge field by field, and the
// aliases entry by entry, the profile's winning.
type Resolved struct {
	file    *File
	profile string
	// Providers and Aliases are the merged sections.
	Providers map[string]Provider
	Aliases   map[string]string
}

// Resolve gives the file as the named profile sees it; "" means the top
// level alone. An unknown profile is an error listing the known ones.
func (f *File) Resolve(profile string) (*Resolved, error) {
	r := &Resolved{file: f, profile: profile, Providers: map[string]Provider{}, Aliases: map[string]string{}}
	layers := []Layer{f.Layer}
	if profile != "" {
		p, ok := f.Profiles[profile]
		if !ok {
			return nil, f.unknownProfile(profile)
		}
		layers = append(layers, p)
	}
	for i, l := range layers {
		prefix := ""
		if i > 0 {
			prefix = "profiles." + profile + "."
		}
		for name, p := range l.Providers {
			r.Providers[name] = mergeProvider(r.Providers[name], p, func(field string) bool {
				return f.has(prefix + "providers." + name + "." + field)
			})
		}
		for name, m := range l.Aliases {
			r.Aliases[name] = m
		}
	}
	return r, nil
}

// mergeProvider lays the fields of hi that the file sets over lo.
func mergeProvider(lo, hi Provider, set func(field string) bool) Provider {
	if set("base_url") {
		lo.BaseURL = hi.BaseURL
	}
	if set("key_env") {
		lo.KeyEnv = hi.KeyEnv
	}
	if set("api_key") {
		lo.APIKey = hi.APIKey
	}
	if set("model") {
		lo.Model = hi.Model
	}
	return lo
}

// LayerValues is one layer's settings, by config key, and where they were
// set: "FILE" or "FILE:PROFILE".
type LayerValues struct {
	Values map[string]any
	Source string
}

// Layers are the top level's settings, then the profile's, lowest first.
func (r *Resolved) Layers() []LayerValues {
	out := []LayerValues{{Values: r.file.Values, Source: r.file.path}}
	if r.profile != "" {
		out = append(out, LayerValues{Values: r.file.Profiles[r.profile].Values, Source: r.file.path + ":" + r.profile})
	}
	return out
}

// Value is the setting a config key names, the profile's over the top
// level's; ok is false when neither sets it.
func (r *Resolved) Value(key string) (v any, ok bool) {
	if r.profile != "" {
		if v, ok := r.file.Profiles[r.profile].Values[key]; ok {
			return v, true
		}
	}
	v, ok = r.file.Values[key]
	return v, ok
}

func (f *File) unknownProfile(name string) error {
	switch {
	case !f.found:
		return &Error{File: f.path, Msg: fmt.Sprintf("no profile %q: the file does not exist", name)}
	case len(f.Profiles) == 0:
		return &Error{File: f.path, Msg: fmt.Sprintf("no profile %q: the file defines no profiles", name)}
	}
	return &Error{File: f.path, Msg: fmt.Sprintf("no profile %q: choose %s", name, orList(f.ProfileNames()))}
}

// File is the file the settings came from.
func (r *Resolved) File() *File { return r.file }

// Profile is the profile in effect, "" for none.
func (r *Resolved) Profile() string { return r.profile }

// fullKey is where in the file the key in effect is set: the profile's
// key when the profile sets it, else the top level's; ok is false when
// neither does.
func (r *Resolved) fullKey(key string) (full string, ok bool) {
	if r.profile != "" && r.file.has("profiles."+r.profile+"."+key) {
		return "profiles." + r.profile + "." + key, true
	}
	return key, r.file.has(key)
}

// IsSet reports whether the file sets the key, such as "mode",
// "tools.allow" or "providers.openai.model".
func (r *Resolved) IsSet(key string) bool {
	_, ok := r.fullKey(key)
	return ok
}

// Source says where a key was set: "FILE" or "FILE:PROFILE"; "" when the
// file does not set it.
func (r *Resolved) Source(key string) string {
	full, ok := r.fullKey(key)
	switch {
	case !ok:
		return ""
	case strings.HasPrefix(full, "profiles."):
		return r.file.path + ":" + r.profile
	}
	return r.file.path
}

// Errorf is an error about a key's value, placed where the key is.
func (r *Resolved) Errorf(key, format string, args ...any) error {
	full, _ := r.fullKey(key)
	return r.file.errorAt(full, fmt.Sprintf(format, args...))
}

// ModelFor is the configured model for a provider: the provider's own
// "model", else the top-level "model" when the file names no provider or
// names this one (a model name belongs to its provider). The key it came
// from is returned too.
func (r *Resolved) ModelFor(provider string) (model, key string) {
	if m := r.Providers[provider].Model; m != "" {
		return m, "providers." + provider + ".model"
	}
	model, _ = r.str("model")
	if named, _ := r.str("provider"); model != "" && (named == "" || named == provider) {
		return model, "model"
	}
	return "", ""
}

func (r *Resolved) str(key string) (string, bool) {
	v, ok := r.Value(key)
	s, _ := v.(string)
	return s, ok
}

// Alias is the model an alias stands for, and the key it is set by; ""
// when name is not an alias.
func (r *Resolved) Alias(name string) (model, key string) {
	if m, ok := r.Aliases[name]; ok {
		return m, "aliases." + name
	}
	return "", ""
}

// Path resolves a path written in the file: "~/" is the home directory
// and a relative path is relative to the file's directory.
func (r *Resolved) Path(p, home string) string {
	switch {
	case p == "":
		return ""
	case p == "~" && home != "":
		return home
	case strings.HasPrefix(p, "~/") && home != "":
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p) || r.file.path == "":
		return p
	}
	return filepath.Join(filepath.Dir(r.file.path), p)
}
