package term

import (
	"fmt"
	"strings"

	"github.com/ask-cli/ask/internal/termtext"
)

// diffLine is one line of a change: ' ' kept, '-' removed, '+' added.
type diffLine struct {
	op   byte
	text string
}

// diffCells bounds the table lineDiff fills for the lines that differ
// (after the common start and end are set aside); past it, the change is
// shown as every old line removed and every new line added, which is still
// all of it.
const diffCells = 1 << 22

// lineDiff is a shortest edit turning lines a into lines b, by the longest
// common subsequence of the lines between their common start and end.
func lineDiff(a, b []string) []diffLine {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var out []diffLine
	for _, l := range a[:pre] {
		out = append(out, diffLine{' ', l})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	out = append(out, middleDiff(am, bm)...)
	for _, l := range a[len(a)-suf:] {
		out = append(out, diffLine{' ', l})
	}
	return out
}

func middleDiff(a, b []string) []diffLine {
	var out []diffLine
	if len(a)*len(b) > diffCells || len(a) == 0 || len(b) == 0 {
		for _, l := range a {
			out = append(out, diffLine{'-', l})
		}
		for _, l := range b {
			out = append(out, diffLine{'+', l})
		}
		return out
	}
	// lcs[i][j] is the length of the longest common subsequence of a[i:]
	// and b[j:], in one slice.
	w := len(b) + 1
	lcs := make([]int32, (len(a)+1)*w)
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i*w+j] = lcs[(i+1)*w+j+1] + 1
			} else {
				lcs[i*w+j] = max(lcs[(i+1)*w+j], lcs[i*w+j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, diffLine{' ', a[i]})
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[(i+1)*w+j] >= lcs[i*w+j+1]):
			out = append(out, diffLine{'-', a[i]}) // removals first, as diff shows them
			i++
		default:
			out = append(out, diffLine{'+', b[j]})
			j++
		}
	}
	return out
}

// diffContext is how many kept lines are shown around a change.
const diffContext = 2

// writeChange shows what a write does to the file it replaces, as hunks
// of a unified diff under indent: every removed and added line, escaped,
// with a few kept lines around them for where they are.
func writeChange(b *strings.Builder, indent, before, after string) {
	oldLines, newLines := valueLines(before), valueLines(after)
	if before == "" {
		oldLines = nil
	}
	if after == "" {
		newLines = nil
	}
	lines := lineDiff(oldLines, newLines)
	changed := 0
	for _, l := range lines {
		if l.op != ' ' {
			changed++
		}
	}
	if changed == 0 {
		if before == after {
			fmt.Fprintf(b, "%schange: none, the file already holds this content\n", indent)
			return
		}
		// Only a last newline differs, which valueLines does not show.
		fmt.Fprintf(b, "%schange: the last newline only (%s)\n", indent, lastNewline(after))
		return
	}
	fmt.Fprintf(b, "%schange to the file it replaces (%s):\n", indent, termtext.Plural(len(oldLines), "line", "lines"))
	// Each line's number in the old and the new file, for the hunk headers.
	oldAt, newAt := make([]int, len(lines)), make([]int, len(lines))
	o, n := 1, 1
	for k, l := range lines {
		oldAt[k], newAt[k] = o, n
		if l.op != '+' {
			o++
		}
		if l.op != '-' {
			n++
		}
	}
	for k := 0; k < len(lines); {
		if lines[k].op == ' ' {
			k++
			continue
		}
		// A hunk: from diffContext kept lines before this change to
		// diffContext kept lines after the last change within reach.
		start, end := max(k-diffContext, 0), k
		for end < len(lines) {
			if lines[end].op != ' ' {
				end++
				continue
			}
			next := end
			for next < len(lines) && lines[next].op == ' ' {
				next++
			}
			if next == len(lines) || next-end > 2*diffContext {
				end = min(end+diffContext, len(lines))
				break
			}
			end = next
		}
		oldN, newN := 0, 0
		for _, l := range lines[start:end] {
			if l.op != '+' {
				oldN++
			}
			if l.op != '-' {
				newN++
			}
		}
		fmt.Fprintf(b, "%s  @@ -%d,%d +%d,%d @@\n", indent, oldAt[start], oldN, newAt[start], newN)
		for _, l := range lines[start:end] {
			fmt.Fprintf(b, "%s  %c %s\n", indent, l.op, termtext.Safe(l.text))
		}
		k = end
	}
	if strings.HasSuffix(before, "\n") != strings.HasSuffix(after, "\n") && after != "" {
		fmt.Fprintf(b, "%s  (%s)\n", indent, lastNewline(after))
	}
}

func lastNewline(after string) string {
	if strings.HasSuffix(after, "\n") {
		return "the new content ends with a newline"
	}
	return "the new content has no newline at its end"
}
