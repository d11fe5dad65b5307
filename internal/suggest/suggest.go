// Package suggest finds the name a user probably meant when what they
// typed is not one: a mistyped command, flag or config key.
package suggest

// Distance is the optimal string alignment distance between a and b, in
// characters: insertions, deletions, substitutions and swaps of two
// neighbours each count one edit ("replya" is one edit from "replay").
func Distance(a, b string) int {
	r, s := []rune(a), []rune(b)
	d := make([][]int, len(r)+1)
	for i := range d {
		d[i] = make([]int, len(s)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(r); i++ {
		for j := 1; j <= len(s); j++ {
			cost := 1
			if r[i-1] == s[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && r[i-1] == s[j-2] && r[i-2] == s[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(r)][len(s)]
}

// Near is the name in names nearest to word when it is near enough to be
// what was meant: at most two edits, and fewer than half the name. Names
// of one letter are never suggested.
func Near(word string, names []string) string {
	best, dist := "", 3
	for _, n := range names {
		if len(n) < 2 {
			continue
		}
		if d := Distance(word, n); d < dist && 2*d < len(n) {
			best, dist = n, d
		}
	}
	return best
}

// Nearest is the name in names nearest to word, at most maxEdits away,
// or "" when none is; of names equally near, the first.
func Nearest(word string, names []string, maxEdits int) string {
	best, bestDist := "", maxEdits+1
	for _, n := range names {
		if d := Distance(word, n); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}
