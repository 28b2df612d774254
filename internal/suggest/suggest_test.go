package suggest

import "testing"

func TestClosest(t *testing.T) {
	cands := []string{"budget", "bytes", "ccai", "conditions", "cubic", "reno"}
	for _, tc := range []struct{ word, want string }{
		{"budgett", "budget"},
		{"budgte", "budget"},
		{"cubc", "cubic"},
		{"ccia", "ccai"},
		{"zzzzzz", ""},
		{"x", ""},
	} {
		if got := Closest(tc.word, cands); got != tc.want {
			t.Errorf("Closest(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
	if got := levenshtein("kitten", "sitting"); got != 3 {
		t.Errorf("levenshtein(kitten, sitting) = %d, want 3", got)
	}
}

func TestOrList(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"a"}, "a"},
		{[]string{"a", "b"}, "a or b"},
		{[]string{"a", "b", "c"}, "a, b or c"},
	} {
		if got := OrList(c.in); got != c.want {
			t.Errorf("OrList(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
