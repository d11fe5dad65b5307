package undo

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// contextLines is the unchanged lines shown around each change, as git shows.
const contextLines = 3

// maxEdits bounds the edit distance the diff searches for: past it, the
// lines between the first and last difference are shown removed and
// added whole, a patch as correct as the shortest one, and the search's
// memory stays bounded (it grows as the square of the distance).
const maxEdits = 2000

// op is one step of an edit script: a line kept, removed or added.
type op struct {
	kind byte // ' ', '-', '+'
	a, b int  // the line's index in old (kept, removed) and new (kept, added)
}

// splitLines splits b into lines, each with its "\n"; the last may have
// none.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			lines = append(lines, b)
			break
		}
		lines = append(lines, b[:i+1])
		b = b[i+1:]
	}
	return lines
}

// edits is the edit script that turns a into b: common lines at both ends
// are kept, and the middle is Myers' shortest script.
func edits(a, b [][]byte) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && bytes.Equal(a[pre], b[pre]) {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && bytes.Equal(a[len(a)-1-suf], b[len(b)-1-suf]) {
		suf++
	}
	var ops []op
	for i := 0; i < pre; i++ {
		ops = append(ops, op{' ', i, i})
	}
	ops = append(ops, myers(a[pre:len(a)-suf], b[pre:len(b)-suf], pre, pre)...)
	for i := 0; i < suf; i++ {
		ops = append(ops, op{' ', len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

// myers is the shortest edit script from a to b (Myers 1986), with line
// indexes offset by oa and ob; past maxEdits, everything removed and added.
func myers(a, b [][]byte, oa, ob int) []op {
	n, m := len(a), len(b)
	whole := func() []op {
		ops := make([]op, 0, n+m)
		for i := range a {
			ops = append(ops, op{'-', oa + i, ob})
		}
		for j := range b {
			ops = append(ops, op{'+', oa + n, ob + j})
		}
		return ops
	}
	if n == 0 || m == 0 {
		return whole()
	}
	limit := min(n+m, maxEdits)
	// v[k+off] is the furthest x on diagonal k; trace keeps v before each d.
	off := limit + 1
	v := make([]int, 2*off+1)
	var trace [][]int
	found := -1
	for d := 0; d <= limit && found < 0; d++ {
		trace = append(trace, append([]int(nil), v[off-d-1:off+d+2]...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an added line
			} else {
				x = v[off+k-1] + 1 // right: a removed line
			}
			y := x - k
			for x < n && y < m && bytes.Equal(a[x], b[y]) {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return whole()
	}
	// Walk back from (n, m): each d's snapshot of v tells the move that
	// led to the diagonal, after the run of kept lines ending there.
	var rev []op
	x, y := n, m
	for d := found; d > 0; d-- {
		prev := trace[d]
		at := func(k int) int { return prev[k+d+1] }
		k := x - y
		pk := k - 1
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{' ', oa + x, ob + y})
		}
		if pk == k+1 {
			y--
			rev = append(rev, op{'+', oa + x, ob + y})
		} else {
			x--
			rev = append(rev, op{'-', oa + x, ob + y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', oa + x, ob + y})
	}
	ops := make([]op, len(rev))
	for i, o := range rev {
		ops[len(rev)-1-i] = o
	}
	return ops
}

// hunks writes the unified diff hunks that turn a into b.
func hunks(w *bytes.Buffer, a, b [][]byte) {
	ops := edits(a, b)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before the first change to context
		// lines after the last change that is not followed by more than
		// twice the context of kept lines.
		start := max(0, i-contextLines)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
				continue
			}
			if j-end >= 2*contextLines {
				break
			}
		}
		stop := min(len(ops), end+contextLines)
		writeHunk(w, ops[start:stop], a, b)
		i = stop
	}
}

func writeHunk(w *bytes.Buffer, ops []op, a, b [][]byte) {
	oldStart, newStart := ops[0].a, ops[0].b
	oldLen, newLen := 0, 0
	for _, o := range ops {
		if o.kind != '+' {
			oldLen++
		}
		if o.kind != '-' {
			newLen++
		}
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(oldStart, oldLen), hunkRange(newStart, newLen))
	for _, o := range ops {
		var line []byte
		if o.kind == '+' {
			line = b[o.b]
		} else {
			line = a[o.a] // kept and removed lines are old's
		}
		w.WriteByte(o.kind)
		w.Write(line)
		if !bytes.HasSuffix(line, []byte("\n")) {
			w.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange is "start,count" as unified diffs number lines: from 1, an
// empty range by the line before it, a count of 1 left out.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(count)
}

// quotePath is a path as git writes it in a patch: as it is, unless it
// holds a quote, a backslash, a control character or a byte past ASCII,
// then in double quotes with C escapes.
func quotePath(p string) string {
	needs := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			needs = true
			break
		}
	}
	if !needs {
		return p
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '"', '\\':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		case '\a':
			sb.WriteString(`\a`)
		case '\b':
			sb.WriteString(`\b`)
		case '\t':
			sb.WriteString(`\t`)
		case '\n':
			sb.WriteString(`\n`)
		case '\v':
			sb.WriteString(`\v`)
		case '\f':
			sb.WriteString(`\f`)
		case '\r':
			sb.WriteString(`\r`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&sb, `\%03o`, c)
			} else {
				sb.WriteByte(c)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// FilePatch writes the git patch that turns before into after for path,
// a binary patch when either side is binary:
// a nil before is a new file, a nil after a deleted one; the same content
// before and after writes nothing. exec is the
// file's mode when it is new or deleted.
func FilePatch(w *bytes.Buffer, path string, before, after []byte, exec bool) {
	if before != nil && after != nil && bytes.Equal(before, after) {
		return // nothing to say
	}
	mode := "100644"
	if exec {
		mode = "100755"
	}
	a, b := quotePath("a/"+path), quotePath("b/"+path)
	fmt.Fprintf(w, "diff --git %s %s\n", a, b)
	switch {
	case before == nil:
		fmt.Fprintf(w, "new file mode %s\n", mode)
		a = "/dev/null"
	case after == nil:
		fmt.Fprintf(w, "deleted file mode %s\n", mode)
		b = "/dev/null"
	}
	if Binary(before) || Binary(after) {
		binaryPatch(w, before, after)
		return
	}
	if bytes.Equal(before, after) {
		return // a new or deleted empty file: the header says it all
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", a, b)
	hunks(w, splitLines(before), splitLines(after))
}

// Binary reports whether git would take content for binary: a NUL byte
// in its first 8000 bytes.
func Binary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), 8000)], 0) >= 0
}
