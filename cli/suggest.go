package cli

import "github.com/actfuzz/actfuzz/act"

// didYouMean is act.DidYouMean: " (did you mean X?)" or "".
func didYouMean(word string, candidates []string) string {
	return act.DidYouMean(word, candidates)
}
