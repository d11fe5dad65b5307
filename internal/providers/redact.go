package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// minHiddenKey is the shortest key hidden in bodies and messages: replacing
// a key of a few characters would garble every text that happens to hold
// them, and no real provider issues such keys.
const minHiddenKey = 8

const redacted = "[redacted]"

// hideKey replaces the caller's key wherever it appears in b: in an error
// page that echoes the request's headers, in a URL that carries it. It
// returns b itself when there is nothing to hide.
func (c *Caller) hideKey(b []byte) []byte {
	if len(c.Key) < minHiddenKey || !bytes.Contains(b, []byte(c.Key)) {
		return b
	}
	return bytes.ReplaceAll(b, []byte(c.Key), []byte(redacted))
}

// hideKeyInError returns err with the key replaced in its message; errors.Is
// and errors.As still see the original, whose *APIError (if any) has the
// key replaced in its Message too.
func (c *Caller) hideKeyInError(err error) error {
	if err == nil || len(c.Key) < minHiddenKey || !strings.Contains(err.Error(), c.Key) {
		return err
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		apiErr.Message = strings.ReplaceAll(apiErr.Message, c.Key, redacted)
	}
	return &hiddenKeyError{msg: strings.ReplaceAll(err.Error(), c.Key, redacted), err: err}
}

type hiddenKeyError struct {
	msg string
	err error
}

func (e *hiddenKeyError) Error() string { return e.msg }
func (e *hiddenKeyError) Unwrap() error { return e.err }

// RedactURL masks the password of a URL's user information
// ("http://user:xxxxx@host"), so that a base URL can be shown and recorded
// while the request still carries it. Text that is not a URL is returned
// as it is.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return u.Redacted()
}

// Redactor replaces a run's secrets (its key, a password) wherever they
// appear in what the run writes, however a provider echoes them back: as
// they are, JSON-escaped, every character \uXXXX-escaped, and each of
// these escaped once and twice more, as they become when a JSON string
// holding them is recorded inside an event (a stream body, a tool's
// arguments). It is safe for concurrent use.
type Redactor struct {
	mu    sync.RWMutex
	forms [][]byte // every spelling of every secret, longest first
}

// NewRedactor returns a redactor of secrets; those shorter than
// minHiddenKey are left alone.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Add(secrets...)
	return r
}

// Add makes r hide secrets too.
func (r *Redactor) Add(secrets ...string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, f := range r.forms {
		seen[string(f)] = true
	}
	for _, s := range secrets {
		if len(s) < minHiddenKey {
			continue
		}
		for _, f := range formsOf(s) {
			if !seen[string(f)] {
				seen[string(f)] = true
				r.forms = append(r.forms, f)
			}
		}
	}
	slices.SortStableFunc(r.forms, func(a, b []byte) int { return len(b) - len(a) })
}

// knownForms holds the spellings of each secret seen, as bytes, which
// redactors share and never change: a run makes a redactor for its key in
// several places (its output, its transcript, the tools' results).
var knownForms sync.Map // secret → [][]byte

// formsOf is spellings(s) as bytes, worked out once per process.
func formsOf(s string) [][]byte {
	if f, ok := knownForms.Load(s); ok {
		return f.([][]byte)
	}
	all := spellings(s)
	var forms [][]byte
	for i, f := range all {
		if !slices.Contains(all[:i], f) {
			forms = append(forms, []byte(f))
		}
	}
	f, _ := knownForms.LoadOrStore(s, forms)
	return f.([][]byte)
}

// spellings are the forms in which s may appear in text ask writes: s
// itself, JSON-escaped (with and without HTML escaping, with "/" as "\/"),
// each character as \u00xx (either case), and each of these JSON-escaped
// once and twice more.
func spellings(s string) []string {
	var lower, upper strings.Builder
	for i := 0; i < len(s); i++ {
		lower.WriteString(`\u00`)
		lower.WriteByte(hexLower[s[i]>>4])
		lower.WriteByte(hexLower[s[i]&15])
		upper.WriteString(`\u00`)
		upper.WriteByte(hexUpper[s[i]>>4])
		upper.WriteByte(hexUpper[s[i]&15])
	}
	escaped, html := jsonEscape(s, false), jsonEscape(s, true)
	slash := func(e string) string { return strings.ReplaceAll(e, "/", `\/`) }
	base := []string{s, escaped, html, slash(escaped), slash(html), lower.String(), upper.String()}
	var out []string
	for _, f := range base {
		for range 3 {
			out = append(out, f)
			f = jsonEscape(f, false)
		}
	}
	return out
}

const hexLower, hexUpper = "0123456789abcdef", "0123456789ABCDEF"

// jsonEscape is s as encoding/json writes it inside a string's quotes. A
// string of printable ASCII without a quote or a backslash (or, with html,
// <, > and &) is written as it is, which is what a key mostly is: that is
// checked here, since a run works out every secret's spellings at its
// start, and an encoder each was most of that.
func jsonEscape(s string, html bool) string {
	if plainJSON(s, html) {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	enc.Encode(s) // a string always encodes
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

// Redact returns b with every spelling of a secret replaced by
// "[redacted]", which needs no escaping, so JSON stays valid. It returns b
// itself when there is nothing to hide.
func (r *Redactor) Redact(b []byte) []byte {
	if r == nil {
		return b
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for _, f := range r.forms {
		if bytes.Contains(b, f) {
			b = bytes.ReplaceAll(b, f, []byte(redacted))
		}
	}
	return b
}

// pending is how many bytes at the end of b could begin a secret whose
// rest is still to come.
func (r *Redactor) pending(b []byte) int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	longest := 0
	for _, f := range r.forms {
		for n := min(len(f)-1, len(b)); n > longest; n-- {
			if bytes.HasSuffix(b, f[:n]) {
				longest = n
				break
			}
		}
	}
	return longest
}

// RedactWriter redacts what is written through it. A write that ends with
// the beginning of a secret is held back until the next write shows
// whether the secret follows, so that a secret split across writes (text
// streamed in pieces) is hidden too; Flush writes what is held.
type RedactWriter struct {
	mu   sync.Mutex
	w    io.Writer
	r    *Redactor
	held []byte
}

// Writer returns a writer that redacts what it passes on to w.
func (r *Redactor) Writer(w io.Writer) *RedactWriter {
	return &RedactWriter{w: w, r: r}
}

func (rw *RedactWriter) Write(p []byte) (int, error) {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	b := append(rw.held, p...)
	keep := rw.r.pending(b)
	out := rw.r.Redact(b[:len(b)-keep])
	rw.held = append([]byte(nil), b[len(b)-keep:]...)
	if len(out) == 0 {
		return len(p), nil
	}
	if _, err := rw.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes what is held back.
func (rw *RedactWriter) Flush() error {
	rw.mu.Lock()
	defer rw.mu.Unlock()
	if len(rw.held) == 0 {
		return nil
	}
	out := rw.r.Redact(rw.held)
	rw.held = nil
	_, err := rw.w.Write(out)
	return err
}

// plainJSON reports whether encoding/json writes s unchanged inside quotes.
func plainJSON(s string, html bool) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			return false
		}
	}
	return true
}
