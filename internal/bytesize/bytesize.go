// Package bytesize reads and writes sizes in bytes as people type them:
// 512K, 4M, 1G.
package bytesize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a size in bytes: a whole number with an optional suffix
// K, M or G (powers of 1024, as ls -h and dd read them; "KB", "MiB" and
// lower case are taken too).
func Parse(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	shift := 0
	if n := len(t); n > 0 {
		switch t[n-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		}
		if shift > 0 {
			t = t[:n-1]
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	switch {
	case err != nil || n < 0:
		return 0, errors.New("not a size")
	case n > (1<<62)>>shift:
		return 0, errors.New("too large")
	}
	return n << shift, nil
}

// Format shows a size in bytes as Parse reads it, rounded down.
func Format(n int64) string {
	for _, u := range []struct {
		shift int
		unit  string
	}{{30, "G"}, {20, "M"}, {10, "K"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d%s", n>>u.shift, u.unit)
		}
	}
	if n >= 1<<10 {
		return fmt.Sprintf("%.1fK", float64(n)/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}
