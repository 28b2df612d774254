package symbolic

// arena allocates the records of one run.
type arena struct {
	chunks [][]genrec
	n      int
}

const arenaChunk = 4096

func (ar *arena) new() *genrec {
	c, k := ar.n/arenaChunk, ar.n%arenaChunk
	if c == len(ar.chunks) {
		ar.chunks = append(ar.chunks, make([]genrec, arenaChunk))
	}
	ar.n++
	r := &ar.chunks[c][k]
	*r = genrec{}
	return r
}

func (ar *arena) reset() { ar.n = 0 }
