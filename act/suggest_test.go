package act

import "testing"

func TestSuggest(t *testing.T) {
	cands := []string{"budget", "bytes", "ccai", "conditions", "cubic", "reno"}
	for _, tc := range []struct{ word, want string }{
		{"budgett", "budget"},
		{"budgte", "budget"},
		{"cubc", "cubic"},
		{"ccia", "ccai"},
		{"zzzzzz", ""},
		{"x", ""},
	} {
		if got := Suggest(tc.word, cands); got != tc.want {
			t.Errorf("Suggest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	if got := levenshtein("kitten", "sitting"); got != 3 {
		t.Errorf("levenshtein(kitten, sitting) = %d, want 3", got)
	}
}
