package settings

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/ask-cli/ask/internal/bytesize"
	"github.com/ask-cli/ask/internal/providers/catalog"
	"github.com/ask-cli/ask/internal/realpath"
)

// WideningError is a lower layer's setting that would let the model do
// more than the command line allows: the layer (its Source, "task line 3")
// may narrow a run, never widen it (DESIGN §1).
type WideningError struct {
	Key    string // the row's name: "yes", "allow-host"
	Source string // the layer: "task line 3", "skill review"
	Why    string // what the value would do: "it approves every call"
}

func (e *WideningError) Error() string {
	return fmt.Sprintf("%s: %q would widen what the model may do (%s); only the command line can give that", e.Source, e.Key, e.Why)
}

// Widening reports whether the row is marked widening: some value of it,
// given below the command line, could let the model do more.
func (r Row) Widening() bool { return r.widen != nil }

// Widens says what v, a value of the row's kind, could let the model do
// that the command line did not allow, when the command line's own value
// is not known (a flag after the prompt's first word): "" when nothing.
func (r Row) Widens(v any) string { return r.WidensOver(v, nil) }

// WidensOver says what v, given by a layer below the command line, would
// let the model do beyond upper, the command line's value of the row (nil
// when it is not known); "" when nothing.
func (r Row) WidensOver(v, upper any) string {
	if r.widen == nil {
		return ""
	}
	return r.widen(v, upper)
}

// Narrow lays lower, one lower layer's settings by row name (a batch task
// line, an editor session, a skill, an agent definition, an MCP client's
// arguments), over upper, the settings the command line resolved. Each
// value goes through its row's Parse; a key that would widen what upper
// allows is refused with a *WideningError naming the key and source, the
// layer. This is the one way a layer below the command line is applied:
// deny rules add up, an allow list may only shrink, a mode or a sandbox
// only get stricter and a limit only goes down.
func Narrow(upper Values, lower Layer, source string) (Values, error) {
	var v Values
	for _, name := range slices.Sorted(maps.Keys(lower)) {
		if err := v.Give(name, lower[name], source); err != nil {
			return upper, fmt.Errorf("%s: %w", source, err)
		}
	}
	return NarrowValues(upper, v)
}

// RealPaths resolves the links in the relative paths lower, a lower
// layer's settings, gives for the rows whose paths must lie inside the
// working directory (workdir, attach, a schema file). wd is the directory
// they are relative to (where ask started), top the command line's
// working directory (its --workdir, absolute). The rows' marks read a path
// as written: through a link (`escape -> /home/me`) "escape/photo.pdf" is
// written inside yet leads out, and with --workdir proj a sibling
// "secrets" is inside wd yet outside top. A path whose real place is not
// inside top becomes that real, absolute path, which the mark then
// refuses; one inside becomes its path from wd's real path, so that the
// run uses what was checked. A path not there yet is resolved as far as
// it exists.
func RealPaths(lower Values, wd, top string) Values {
	realWd, err := filepath.EvalSymlinks(wd)
	if err != nil {
		return lower
	}
	realTop := realpath.Existing(top)
	for _, r := range Rows() {
		if !r.paths {
			continue
		}
		l := r.slot(&lower)
		if !l.given() {
			continue
		}
		switch v := l.value().(type) {
		case string:
			l.set(realPath(realWd, realTop, v), l.source())
		case []string:
			out := make([]string, len(v))
			for i, p := range v {
				out[i] = realPath(realWd, realTop, p)
			}
			l.set(out, l.source())
		}
	}
	return lower
}

// realPath is p, relative to wd (links resolved), resolved as RealPaths
// says. An absolute path, or a schema given as text, is left as it is.
func realPath(wd, top, p string) string {
	if p == "" || filepath.IsAbs(p) || strings.HasPrefix(strings.TrimSpace(p), "{") {
		return p
	}
	path := realpath.Existing(filepath.Join(wd, p))
	if rel, err := filepath.Rel(top, path); err != nil || !filepath.IsLocal(rel) && rel != "." {
		return path
	}
	if path == wd {
		return "."
	}
	if rel, err := filepath.Rel(wd, path); err == nil && filepath.IsLocal(rel) {
		return rel
	}
	return path
}

// NarrowValues is Narrow for a layer whose values were already parsed
// (each given setting's Source names its layer).
func NarrowValues(upper, lower Values) (Values, error) {
	for _, r := range Rows() {
		if !r.IsSetting() {
			continue
		}
		l := r.slot(&lower)
		if !l.given() {
			continue
		}
		u := r.slot(&upper)
		up := u.value()
		if !u.given() && r.Default != nil {
			up = r.Default
		}
		if why := r.WidensOver(l.value(), up); why != "" {
			return upper, &WideningError{Key: r.Name, Source: l.source(), Why: why}
		}
	}
	return Over(lower, upper), nil
}

// Give gives the row named name the value v from source, through the
// row's Parse: v is the kind's Go type, a JSON decoder's (float64, []any)
// or, for a kind other than String, text as a flag or a variable gives
// it. The error says what is wrong with the value, naming the row.
func (v *Values) Give(name string, value any, source string) error {
	r, ok := Lookup(name)
	if !ok || !r.IsSetting() {
		return fmt.Errorf("no setting %q", name)
	}
	parsed, err := r.Parse(value)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return r.slot(v).set(parsed, source)
}

// Check runs every setting a layer gave in v through its row's Parse: a
// safety net for settings a caller built by hand, since every layer
// parses its values as it reads them.
func (v *Values) Check() error {
	for _, r := range Rows() {
		if !r.IsSetting() {
			continue
		}
		s := r.slot(v)
		if !s.given() || s.source() == "default" {
			continue
		}
		if _, err := r.Parse(s.value()); err != nil {
			return fmt.Errorf("--%s %w (%s)", r.Name, err, s.source())
		}
	}
	return nil
}

// Parse is the row's one check and parse, which every layer's value goes
// through: v is of the kind's Go type, a JSON decoder's, or text as a flag
// or variable gives it. It returns the value of the kind, or an error
// saying what is wrong in words each layer puts after its own key.
func (r Row) Parse(v any) (any, error) {
	x, err := r.Kind.convert(v)
	if err != nil {
		return nil, err
	}
	if len(r.Choices) > 0 {
		if s, _ := x.(string); !slices.Contains(r.Choices, s) && !(s == "" && r.Default == "") {
			return nil, fmt.Errorf("%q: choose %s", s, OrList(r.Choices))
		}
	}
	if r.check != nil {
		if msg := r.check(x); msg != "" {
			return nil, errors.New(msg)
		}
	}
	return x, nil
}

// Check says what is wrong with v, in the words a config file's error
// uses; "" when nothing is. It is Parse without the value.
func (r Row) Check(v any) string {
	if _, err := r.Parse(v); err != nil {
		return err.Error()
	}
	return ""
}

// convert makes v a value of kind k: the kind's Go type as it is, a JSON
// decoder's number or list, or text.
func (k Kind) convert(v any) (any, error) {
	text, isText := v.(string)
	bad := func() (any, error) {
		if isText {
			return nil, fmt.Errorf("%q: %s", text, k.Hint())
		}
		return nil, fmt.Errorf("%v: %s", v, k.Hint())
	}
	switch k {
	case String:
		if isText {
			return text, nil
		}
	case Bool:
		if b, ok := v.(bool); ok {
			return b, nil
		}
		switch text {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	case Int:
		switch n := v.(type) {
		case int:
			return n, nil
		case float64:
			if n == float64(int(n)) {
				return int(n), nil
			}
		case string:
			var i int
			if _, err := fmt.Sscan(n, &i); err == nil && fmt.Sprint(i) == strings.TrimPrefix(n, "+") {
				return i, nil
			}
		}
	case Float:
		switch f := v.(type) {
		case float64:
			return f, nil
		case int:
			return float64(f), nil
		case string:
			var x float64
			if _, err := fmt.Sscan(f, &x); err == nil {
				return x, nil
			}
		}
	case Duration:
		if d, ok := v.(time.Duration); ok {
			return d, nil
		}
		if d, err := time.ParseDuration(text); isText && err == nil {
			return d, nil
		}
		if isText {
			return nil, fmt.Errorf("%q: give a duration such as 30s or 5m, or 0 for none", text)
		}
	case List:
		switch l := v.(type) {
		case []string:
			return l, nil
		case []any:
			out := make([]string, 0, len(l))
			for _, x := range l {
				s, ok := x.(string)
				if !ok {
					return nil, fmt.Errorf("%v: give a list of strings", v)
				}
				out = append(out, s)
			}
			return out, nil
		case string:
			return []string{l}, nil
		}
		return nil, fmt.Errorf("%v: give a list of strings", v)
	}
	if k == String {
		return nil, fmt.Errorf("%v: give a string", v)
	}
	return bad()
}

// The widening marks of the rows. Each says what a value would let the
// model do beyond upper, the command line's value (nil: not known).

// always widens, whatever the value: the row names a program, a file or
// settings the command line did not.
func always(why string) func(v, upper any) string {
	return func(any, any) string { return why }
}

// unlessSame widens unless the value is the command line's own.
func unlessSame(why string) func(v, upper any) string {
	return func(v, upper any) string {
		if upper != nil && reflect.DeepEqual(v, upper) {
			return ""
		}
		if s, _ := v.(string); s == "" && upper == nil {
			return "" // none
		}
		return why
	}
}

// switchWidens widens when the switch is turned to wide and the command
// line's is not.
func switchWidens(wide bool, why string) func(v, upper any) string {
	return func(v, upper any) string {
		if v == wide && upper != wide {
			return why
		}
		return ""
	}
}

// stricterOnly takes values strictest first: a lower layer may keep the
// command line's or choose a stricter one.
func stricterOnly(order ...string) func(v, upper any) string {
	return func(v, upper any) string {
		rank := func(x any) int {
			if i := slices.Index(order, fmt.Sprint(x)); i >= 0 {
				return i
			}
			return len(order) - 1 // "" is the default, the widest
		}
		limit := 0
		if upper != nil {
			limit = rank(upper)
		}
		if rank(v) > limit {
			return fmt.Sprintf("%v is less strict than %v", v, order[limit])
		}
		return ""
	}
}

// lowersOnly is a limit's mark: a lower layer may lower it, never raise
// it or take it away. amount is a value's size, ok false for no limit.
// After the prompt (upper nil) a limit is the command line's own.
func lowersOnly(amount func(any) (float64, bool)) func(v, upper any) string {
	return func(v, upper any) string {
		if upper == nil {
			return ""
		}
		hi, limited := amount(upper)
		lo, lowLimited := amount(v)
		switch {
		case !limited:
			return ""
		case !lowLimited:
			return "it lifts the command line's limit"
		case lo > hi:
			return fmt.Sprintf("%v is above the command line's %v", v, upper)
		}
		return ""
	}
}

// amount is a number's size.
func amount(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case float64:
		return n, true
	case time.Duration:
		return float64(n), true
	}
	return 0, false
}

// amountOrNone is a number's size, 0 being no limit.
func amountOrNone(v any) (float64, bool) {
	n, ok := amount(v)
	return n, ok && n != 0
}

// processes is --sandbox-max-processes' limit: 0 is the sandbox's 1024.
func processes(v any) (float64, bool) {
	if n, _ := v.(int); n > 0 {
		return float64(n), true
	}
	return 1024, true
}

// scratchBytes is the scratch size's limit: "" is the sandbox's 2G.
func scratchBytes(v any) (float64, bool) {
	s, _ := v.(string)
	if s == "" {
		s = "2G"
	}
	n, err := bytesize.Parse(s)
	return float64(n), err == nil
}

// shrinksOnly is an allow list's mark: each item a lower layer gives must
// be the command line's too (the lists' intersection), never a new one.
func shrinksOnly(why string) func(v, upper any) string {
	return func(v, upper any) string {
		have, _ := upper.([]string)
		for _, item := range v.([]string) {
			if !slices.Contains(have, item) {
				return fmt.Sprintf("%s: %q", why, item)
			}
		}
		return ""
	}
}

// insideWorkdir is the mark of paths: each must lie inside the working
// directory (lexically: relative, with no way up), unless the command
// line gives that very path.
func insideWorkdir(why string) func(v, upper any) string {
	return func(v, upper any) string {
		paths, isList := v.([]string)
		if !isList {
			paths = []string{v.(string)}
		}
		have, _ := upper.([]string)
		if s, ok := upper.(string); ok {
			have = []string{s}
		}
		for _, p := range paths {
			if p == "" || p == "." || filepath.IsLocal(p) || slices.Contains(have, p) {
				continue
			}
			return fmt.Sprintf("%s: %q", why, p)
		}
		return ""
	}
}

// schemaInside is --schema's mark: the schema itself is text, a file
// must lie inside the working directory.
func schemaInside(v, upper any) string {
	if s, _ := v.(string); strings.HasPrefix(strings.TrimSpace(s), "{") {
		return ""
	}
	return insideWorkdir("it sends a file from outside the working directory")(v, upper)
}

// localProgram is --provider's mark: a provider that runs a program on
// this machine widens; one that is sent requests does not.
func localProgram(v, upper any) string {
	if v == upper {
		return ""
	}
	if p, err := catalog.Lookup(fmt.Sprint(v)); err == nil && p.LocalProgram {
		return "it runs a program on this machine as the model"
	}
	return ""
}
