// Package suggest finds the likely intended word for a misspelt one (a
// campaign key, a flag, a CCAI name): "did you mean" suggestions.
package suggest

import (
	"fmt"
	"strings"
)

// levenshtein is the edit distance between a and b (insertions, deletions
// and substitutions of runes).
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Closest returns the candidate closest to word by edit distance, if it is
// close enough to be a likely typo (at most 2 edits, and fewer edits than
// word has runes), else "".
func Closest(word string, candidates []string) string {
	best, bestD := "", 3
	for _, c := range candidates {
		if d := levenshtein(word, c); d < bestD && d < len([]rune(word)) {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean is " (did you mean X?)" for Closest's X, or "".
func DidYouMean(word string, candidates []string) string {
	if s := Closest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// OrList lists choices for a message: "a", "a or b", "a, b or c".
func OrList(choices []string) string {
	switch len(choices) {
	case 0:
		return ""
	case 1:
		return choices[0]
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}
