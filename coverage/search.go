package coverage

import "math/rand/v2"

// levelLines computes the lines through the regions of star (encoded in
// s.scr.star) along every variable at every level, in one walk down the
// levels per variable: the walk of line at k = 1 meets the line of every
// coarser level on its way. The positions of variable j at level lv are
// s.scr.all[span[0]:span[1]] with span = s.scr.span[j*(L+1)+lv] (empty for
// levels above bits_j, where the line is R(star) alone).
func (s *Store) levelLines() {
	ly := s.ly
	L := ly.L
	sc := &s.scr
	if len(sc.span) != ly.d*(L+1) {
		sc.span = make([][2]int32, ly.d*(L+1))
	}
	sc.all = sc.all[:0]
	for j := range ly.d {
		span := sc.span[j*(L+1) : (j+1)*(L+1)]
		clear(span)
		top, cat := ly.nbits[j], ly.cat[j]
		if cat {
			top = L
		} else if top == 0 || top < s.floor {
			continue // one position at every level kept: no line
		}
		// The line at the top level: every categorical value, or the single
		// numerical position 0.
		cands := s.allValues(j)
		start := len(sc.all)
		sc.all = s.filter(sc.star, j, top, cands, sc.all)
		span[top] = [2]int32{int32(start), int32(len(sc.all))}
		for lv := top - 1; lv >= s.floor; lv-- {
			prev := span[lv+1]
			if prev[0] == prev[1] {
				break
			}
			// A categorical value visited at lv is visited at lv+1; a
			// numerical position at lv is a child of one at lv+1.
			cands = sc.all[prev[0]:prev[1]]
			if !cat {
				cands = s.children(cands, j, lv)
			} else {
				cands = append(sc.ch[:0], cands...)
				sc.ch = cands
			}
			start := len(sc.all)
			sc.all = s.filter(sc.star, j, lv, cands, sc.all)
			span[lv] = [2]int32{int32(start), int32(len(sc.all))}
		}
	}
}

// lineAt returns the line of variable j at level lv computed by levelLines.
func (s *Store) lineAt(j, lv int) []uint32 {
	sp := s.scr.span[j*(s.ly.L+1)+lv]
	return s.scr.all[sp[0]:sp[1]]
}

// useLevel copies the lines of level lv into s.scr.lines/off, where
// RandomBracket and RandomNeighbour's helpers read them.
func (s *Store) useLevel(lv int) {
	s.scr.lines = s.scr.lines[:0]
	for j := range s.ly.d {
		s.scr.off[j] = len(s.scr.lines)
		s.scr.lines = append(s.scr.lines, s.lineAt(j, lv)...)
	}
	s.scr.off[s.ly.d] = len(s.scr.lines)
}

// Estimation is the outcome of the search of ACT Method 1 for an unvisited
// state s*: the smallest region size K at which a bracket (interpolation,
// lines 4–13) or else a neighbour (extrapolation, lines 14–19) exists.
type Estimation struct {
	K           int
	Interpolate bool      // Bracket is set; otherwise Neighbour is
	Bracket     Bracket   // for interpolation: draw p* between visits of A and B
	Neighbour   Neighbour // for extrapolation: move p away from a visit of Neighbour.Ref along Var
}

// SearchEstimation runs the k loop of ACT Method 1 (k = 1, 2, 4, … up to
// MaxK) for star and draws the pair or the neighbour at the first k that has
// one, exactly as RandomBracket and RandomNeighbour would at that k, except
// that it draws no visit from the neighbour's pool (Neighbour.Visit is
// left zero): the caller draws the visits of its searches' states, from
// [Store.Pools] at once (an index asks its parts in one request each). It
// costs about as much as one RandomBracket at k = 1, because one walk down
// the levels finds the lines of every k. ok is false when star is outside S
// or nothing is found at any k.
func (s *Store) SearchEstimation(rng *rand.Rand, star []float64) (est Estimation, ok bool) {
	if _, ok := s.prepare(star, 1); !ok {
		return est, false
	}
	s.levelLines()
	for lv := s.floor; lv <= s.ly.L; lv++ {
		s.useLevel(lv)
		if br, ok := s.pickBracket(rng, lv); ok {
			return Estimation{K: 1 << lv, Interpolate: true, Bracket: br}, true
		}
		if nb, ok := s.pickNeighbour(rng, lv, false); ok {
			return Estimation{K: 1 << lv, Neighbour: nb}, true
		}
	}
	return est, false
}

// SearchConcatenation runs the k loop of ACT Method 2 (lines 2–8): at the
// smallest k at which some visited region differs from R(star,k) in exactly
// one variable, it draws such a state s^d uniformly by region. A visit G^d
// from its pool, whose time At is the t_n at which to switch to the new
// environment, is the caller's to draw, as for [Store.SearchEstimation]
// (nb.Visit is left zero). ok is false when star is outside S or there is
// none at any k.
func (s *Store) SearchConcatenation(rng *rand.Rand, star []float64) (k int, nb Neighbour, ok bool) {
	if _, ok := s.prepare(star, 1); !ok {
		return 0, nb, false
	}
	s.levelLines()
	for lv := s.floor; lv <= s.ly.L; lv++ {
		s.useLevel(lv)
		if nb, ok := s.pickNeighbour(rng, lv, false); ok {
			return 1 << lv, nb, true
		}
	}
	return 0, nb, false
}
