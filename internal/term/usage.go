package term

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ask-cli/ask/internal/providers"
	"github.com/ask-cli/ask/internal/termtext"
)

// RunSummary is the line a run on a terminal ends with: its steps, the
// tokens in (and the share of them read from the provider's cache) and
// out, and the cost when the provider reported one, such as
//
//	4 steps · 18,240 tokens in (81% from cache), 612 out · $0.0132
func RunSummary(steps int, u providers.Usage) string {
	parts := []string{termtext.Plural(steps, "step", "steps")}
	if u.InputTokens > 0 || u.OutputTokens > 0 {
		in := groupDigits(u.InputTokens) + " tokens in"
		if u.CacheReadTokens > 0 && u.InputTokens > 0 {
			in += fmt.Sprintf(" (%d%% from cache)", u.CacheReadTokens*100/u.InputTokens)
		}
		parts = append(parts, in+", "+groupDigits(u.OutputTokens)+" out")
	}
	if u.Cost != nil {
		parts = append(parts, formatCost(*u.Cost))
	}
	return strings.Join(parts, " · ")
}

// StepUsage is one step's usage for -v: tokens in, what of them the
// cache served and took, tokens out, and the cost when reported.
func StepUsage(u providers.Usage) string {
	var b strings.Builder
	b.WriteString(groupDigits(u.InputTokens) + " tokens in")
	var cache []string
	if u.CacheReadTokens > 0 {
		cache = append(cache, groupDigits(u.CacheReadTokens)+" read from cache")
	}
	if u.CacheWriteTokens > 0 {
		cache = append(cache, groupDigits(u.CacheWriteTokens)+" written to it")
	}
	if len(cache) > 0 {
		b.WriteString(" (" + strings.Join(cache, ", ") + ")")
	}
	b.WriteString(", " + groupDigits(u.OutputTokens) + " out")
	if u.Cost != nil {
		b.WriteString(", " + formatCost(*u.Cost))
	}
	return b.String()
}

// formatCost shows a cost in dollars to four decimals, which a cheap
// step needs; a cost too small for them is shown as under $0.0001.
func formatCost(c float64) string {
	switch {
	case c > 0 && c < 0.00005:
		return "<$0.0001"
	case c >= 100:
		return fmt.Sprintf("$%.2f", c)
	}
	return fmt.Sprintf("$%.4f", c)
}

// groupDigits writes n with a comma between groups of three digits.
func groupDigits(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
