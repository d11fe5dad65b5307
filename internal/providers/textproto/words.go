package textproto

import (
	"errors"
	"strings"
)

// heredocWord stands for a heredoc's body among the words of a line.
const heredocWord = "\x00heredoc\x00"

// heredocOp matches <<EOF, <<'EOF', <<"EOF" and <<-EOF.
var heredocOp = lazyRegexp(`<<(-?)[ \t]*(?:'([^'\n]+)'|"([^"\n]+)"|([A-Za-z_][A-Za-z0-9_]*))`)

// heredoc is one here-document a command line opened.
type heredoc struct {
	delim     string
	stripTabs bool
	lines     []string
	closed    bool
}

// cutHeredocs replaces each heredoc operator of a line by heredocWord and
// returns the heredocs it opens, in order.
func cutHeredocs(line string) (string, []*heredoc) {
	var docs []*heredoc
	re := heredocOp()
	out := re.ReplaceAllStringFunc(line, func(op string) string {
		m := re.FindStringSubmatch(op)
		docs = append(docs, &heredoc{delim: m[2] + m[3] + m[4], stripTabs: m[1] == "-"})
		return " " + heredocWord + " "
	})
	return out, docs
}

// body is the heredoc's text as a shell would pass it: every line ends with
// a newline.
func (h *heredoc) body() string {
	if len(h.lines) == 0 {
		return ""
	}
	return strings.Join(h.lines, "\n") + "\n"
}

var errUnclosedQuote = errors.New("a quote is not closed")

// splitWords splits a command line into words the way a POSIX shell does
// for the quoting models use: 'single quotes', "double quotes" with \"
// and \\ escapes, and a backslash outside quotes. Nothing is expanded.
func splitWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '\'':
			end := strings.IndexByte(line[i+1:], '\'')
			if end < 0 {
				return nil, errUnclosedQuote
			}
			w.WriteString(line[i+1 : i+1+end])
			i += end + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
					i++
				}
				w.WriteByte(line[i])
			}
			if i >= len(line) {
				return nil, errUnclosedQuote
			}
			inWord = true
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			inWord = true
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// firstWord splits a line into its first word and the rest.
func firstWord(line string) (string, string) {
	line = strings.TrimSpace(line)
	if i := strings.IndexAny(line, " \t"); i >= 0 {
		return line[:i], strings.TrimSpace(line[i+1:])
	}
	return line, ""
}
