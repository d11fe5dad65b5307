package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
)

// Resolved is the settings in effect for one profile: the profile's keys
// over the top level's, key by key. A list in a profile replaces the top
// level's list; a provider's settings merge field by field.
type Resolved struct {
	Settings
	file    *File
	profile string
	// from maps each key that is set ("mode", "tools.allow",
	// "providers.openai.base_url") to where in the file it was set.
	from map[string]string
}

// Resolve merges the named profile over the top level; "" means the top
// level alone. An unknown profile is an error listing the known ones.
func (f *File) Resolve(profile string) (*Resolved, error) {
	r := &Resolved{file: f, profile: profile, from: map[string]string{}}
	overlay(reflect.ValueOf(&r.Settings).Elem(), reflect.ValueOf(f.Settings), "", "", f, r.from)
	if profile == "" {
		return r, nil
	}
	p, ok := f.Profiles[profile]
	if !ok {
		return nil, f.unknownProfile(profile)
	}
	overlay(reflect.ValueOf(&r.Settings).Elem(), reflect.ValueOf(p), "profiles."+profile+".", "", f, r.from)
	return r, nil
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

// overlay copies into dst every field of src whose key is present in the
// file under prefix, recording where it came from.
func overlay(dst, src reflect.Value, prefix, path string, f *File, from map[string]string) {
	t := src.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if sf.Anonymous {
			overlay(dst.Field(i), src.Field(i), prefix, path, f, from)
			continue
		}
		name, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		key := join(path, name)
		d, s := dst.Field(i), src.Field(i)
		switch sf.Type.Kind() {
		case reflect.Struct:
			overlay(d, s, prefix, key, f, from)
		case reflect.Map:
			if sf.Type.Elem().Kind() != reflect.Struct {
				// A map of plain values (aliases): each entry is a key of
				// its own, and a profile's entry replaces the top level's.
				for _, k := range s.MapKeys() {
					entry := key + "." + k.String()
					if !f.has(prefix + entry) {
						continue
					}
					if d.IsNil() {
						d.Set(reflect.MakeMap(sf.Type))
					}
					d.SetMapIndex(k, s.MapIndex(k))
					from[entry] = prefix + entry
				}
				continue
			}
			for _, k := range s.MapKeys() {
				if d.IsNil() {
					d.Set(reflect.MakeMap(sf.Type))
				}
				elem := reflect.New(sf.Type.Elem()).Elem()
				if old := d.MapIndex(k); old.IsValid() {
					elem.Set(old)
				}
				overlay(elem, s.MapIndex(k), prefix, key+"."+k.String(), f, from)
				d.SetMapIndex(k, elem)
			}
		default:
			if !f.has(prefix + key) {
				continue
			}
			if s.Kind() == reflect.Slice {
				cp := reflect.MakeSlice(s.Type(), s.Len(), s.Len())
				reflect.Copy(cp, s)
				s = cp
			}
			d.Set(s)
			from[key] = prefix + key
		}
	}
}

// File is the file the settings came from.
func (r *Resolved) File() *File { return r.file }

// Profile is the profile in effect, "" for none.
func (r *Resolved) Profile() string { return r.profile }

// IsSet reports whether the file sets the key, such as "mode",
// "tools.allow" or "providers.openai.model".
func (r *Resolved) IsSet(key string) bool {
	_, ok := r.from[key]
	return ok
}

// Source says where a key was set: "FILE" or "FILE:PROFILE"; "" when the
// file does not set it.
func (r *Resolved) Source(key string) string {
	full, ok := r.from[key]
	if !ok {
		return ""
	}
	if strings.HasPrefix(full, "profiles.") {
		return r.file.path + ":" + r.profile
	}
	return r.file.path
}

// Errorf is an error about a key's value, placed where the key is.
func (r *Resolved) Errorf(key, format string, args ...any) error {
	full, ok := r.from[key]
	if !ok {
		full = key
	}
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
	if r.Model != "" && (r.Provider == "" || r.Provider == provider) {
		return r.Model, "model"
	}
	return "", ""
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
