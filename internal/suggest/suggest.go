// Package suggest finds the name a user probably meant when what they
// typed is not one: a mistyped command, flag or config key.
package suggest

import "unicode/utf8"

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
// of one letter are never suggested. Of names equally near, one with the
// same letters as word wins ("modle" is "model" with two letters swapped,
// not "mode" with one added), then the first.
func Near(word string, names []string) string {
	best, dist := "", 3
	for _, n := range names {
		if len(n) < 2 {
			continue
		}
		if d := Distance(word, n); 2*d < len(n) && nearer(word, d, n, dist, best) {
			best, dist = n, d
		}
	}
	return best
}

// Nearest is the name in names nearest to word, at most maxEdits away,
// or "" when none is; of names equally near, one with word's letters,
// then the first.
func Nearest(word string, names []string, maxEdits int) string {
	best, bestDist := "", maxEdits+1
	letters := utf8.RuneCountInString(word)
	for _, n := range names {
		// Names longer or shorter by more than maxEdits letters are
		// further: every prompt of a few words is checked against every
		// command's name (cmd/ask's nearCommand), on its way to the model.
		if diff := letters - utf8.RuneCountInString(n); diff > maxEdits || -diff > maxEdits {
			continue
		}
		if d := Distance(word, n); nearer(word, d, n, bestDist, best) {
			best, bestDist = n, d
		}
	}
	return best
}

// nearer reports whether name, d edits from word, beats best, bestD
// edits away: fewer edits, or as many and name is word's letters swapped
// (the commonest slip of typing) where best is not.
func nearer(word string, d int, name string, bestD int, best string) bool {
	if d != bestD {
		return d < bestD
	}
	return best != "" && sameLetters(word, name) && !sameLetters(word, best)
}

// sameLetters reports whether a and b hold the same letters, each as often.
func sameLetters(a, b string) bool {
	count := map[rune]int{}
	for _, r := range a {
		count[r]++
	}
	for _, r := range b {
		count[r]--
	}
	for _, n := range count {
		if n != 0 {
			return false
		}
	}
	return true
}
