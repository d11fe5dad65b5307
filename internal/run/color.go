package run

import "github.com/ask-cli/ask/internal/config"

// Color is the --color setting and where it came from: the flag (given
// says whether it was typed), else NO_COLOR (never), else the config file,
// else auto. It is resolved apart from the other settings, before the
// flags are parsed: even an error in them is shown in colour.
func Color(flag string, given bool, getenv func(string) string, r *config.Resolved) (mode, source string) {
	if given {
		return flag, "flag --color"
	}
	if getenv("NO_COLOR") != "" {
		return "never", "env NO_COLOR"
	}
	if r != nil && r.IsSet("color") {
		v, _ := r.Value("color")
		return v.(string), "config " + r.Source("color")
	}
	return "auto", "default"
}
