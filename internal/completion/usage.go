package completion

import (
	"strings"

	"github.com/ask-cli/ask/internal/termtext"
)

// Placeholder is the `NAME` a flag's usage quotes for its value, as help
// shows it; "" when it quotes none.
func Placeholder(usage string) string {
	_, rest, ok := strings.Cut(usage, "`")
	if !ok {
		return ""
	}
	name, _, ok := strings.Cut(rest, "`")
	if !ok {
		return ""
	}
	return name
}

// MenuUsage is a flag's usage for a completion menu: without the
// placeholder's quotes and "(default: ...)", on one short line.
func MenuUsage(usage string) string {
	usage = strings.ReplaceAll(usage, "`", "")
	if i := strings.Index(usage, " (default"); i > 0 {
		if j := strings.Index(usage[i:], ")"); j > 0 {
			usage = usage[:i] + usage[i+j+1:]
		}
	}
	return termtext.Shorten(usage, 80)
}
