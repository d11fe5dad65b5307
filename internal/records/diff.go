package records

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
)

// DiffJSON lists where two JSON documents differ in meaning (key order and
// spacing aside), one line a difference as "path: recorded X, rebuilt Y",
// at most limit lines.
func DiffJSON(recorded, rebuilt []byte, limit int) []string {
	var a, b any
	errA := json.Unmarshal(recorded, &a)
	errB := json.Unmarshal(rebuilt, &b)
	if errA != nil || errB != nil {
		if string(recorded) == string(rebuilt) {
			return nil
		}
		return []string{"body: not JSON, and the bytes differ"}
	}
	var out []string
	diffValue("", a, b, &out, limit)
	return out
}

func diffValue(path string, a, b any, out *[]string, limit int) {
	if len(*out) >= limit {
		return
	}
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := map[string]bool{}
		for k := range av {
			keys[k] = true
		}
		for k := range bv {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			x, inA := av[k]
			y, inB := bv[k]
			p := join(path, k)
			switch {
			case !inA:
				add(out, limit, "%s: not recorded, rebuilt %s", p, short(y))
			case !inB:
				add(out, limit, "%s: recorded %s, not rebuilt", p, short(x))
			default:
				diffValue(p, x, y, out, limit)
			}
		}
		return
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := 0; i < max(len(av), len(bv)); i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(av):
				add(out, limit, "%s: not recorded, rebuilt %s", p, short(bv[i]))
			case i >= len(bv):
				add(out, limit, "%s: recorded %s, not rebuilt", p, short(av[i]))
			default:
				diffValue(p, av[i], bv[i], out, limit)
			}
		}
		return
	default:
		if fmt.Sprint(a) == fmt.Sprint(b) && sameKind(a, b) {
			return
		}
	}
	if short(a) != short(b) || !sameKind(a, b) {
		add(out, limit, "%s: recorded %s, rebuilt %s", orRoot(path), short(a), short(b))
	}
}

func sameKind(a, b any) bool { return fmt.Sprintf("%T", a) == fmt.Sprintf("%T", b) }

func add(out *[]string, limit int, format string, args ...any) {
	if len(*out) < limit {
		*out = append(*out, fmt.Sprintf(format, args...))
	}
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orRoot(p string) string {
	if p == "" {
		return "(whole body)"
	}
	return p
}

// short renders a value as compact JSON cut to 80 characters.
func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "…"
	}
	return s
}
