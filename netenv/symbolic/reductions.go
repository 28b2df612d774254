package symbolic

import (
	"fmt"
	"strings"
)

// Reductions selects SEIB's techniques for eliminating unnecessary
// comparisons (ACM TOMACS 2022, §4). The zero value is the original
// simulator: one sorted event list, the two-comparison Before of
// pseudocode 3, cancelled timers kept in the list until they expire, and
// events beyond the end kept.
type Reductions struct {
	S   bool // pseudocode 4: one timestamp comparison per Before
	Ce  bool // pseudocode 5: discard events beyond the end of the simulation
	Cc  bool // pseudocode 6: remove cancelled timers at once
	Coc bool // pseudocode 7: waiting lists for outstanding timers (implies Cc)
	I   bool // pseudocode 8: per-node event lists, local synchronization, global deadlock recovery
	// H is state hashing (the J-Sim thesis's state merging, not SEIB's):
	// a run that reaches a state an earlier run reached, with the same
	// constraints on the delays still pending, stops there, because the
	// earlier run's subtree already covers its future.
	H bool
}

// C reports whether all of technique C (Ce and Coc) is on.
func (r Reductions) C() bool { return r.Ce && r.Coc }

// String is the canonical name: "none", or the techniques in the order S,
// C (or its parts Ce, Cc, Coc), I — "SCI", "SCeI", …
func (r Reductions) String() string {
	var b strings.Builder
	if r.S {
		b.WriteString("S")
	}
	switch {
	case r.Ce && r.Coc:
		b.WriteString("C")
	default:
		if r.Ce {
			b.WriteString("Ce")
		}
		if r.Coc {
			b.WriteString("Coc")
		} else if r.Cc {
			b.WriteString("Cc")
		}
	}
	if r.I {
		b.WriteString("I")
	}
	if r.H {
		b.WriteString("H")
	}
	if b.Len() == 0 {
		return "none"
	}
	return b.String()
}

// ParseReductions parses "none", or a concatenation of S, C, Ce, Cc, Coc and
// I (for example "SCI", "SC", "CeI"), optionally separated by commas or '+'.
func ParseReductions(s string) (Reductions, error) {
	var r Reductions
	t := strings.TrimSpace(s)
	if t == "" || strings.EqualFold(t, "none") || t == "original" {
		return r, nil
	}
	for len(t) > 0 {
		switch {
		case t[0] == ',' || t[0] == '+' || t[0] == ' ':
			t = t[1:]
		case strings.HasPrefix(t, "Coc"):
			r.Coc, r.Cc = true, true
			t = t[3:]
		case strings.HasPrefix(t, "Cc"):
			r.Cc = true
			t = t[2:]
		case strings.HasPrefix(t, "Ce"):
			r.Ce = true
			t = t[2:]
		case t[0] == 'C':
			r.Ce, r.Cc, r.Coc = true, true, true
			t = t[1:]
		case t[0] == 'S':
			r.S = true
			t = t[1:]
		case t[0] == 'I':
			r.I = true
			t = t[1:]
		case t[0] == 'H':
			r.H = true
			t = t[1:]
		default:
			return Reductions{}, fmt.Errorf("reductions %q: unknown technique at %q (want none, or letters from S, C, I and H; C's parts are Ce, Cc, Coc)", s, t)
		}
	}
	return r, nil
}
