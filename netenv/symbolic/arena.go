package symbolic

// arena allocates the records of one run.
//
// A prefix snapshot (prefix.go) does not save the chunks: a record is
// written when it is allocated and while its event runs (kids), and a
// branch allocates from n on, so the records below n that it can write or
// read are those of pending events and their generators, which the
// snapshot reaches through the entries (entry.rec, genrec.gen) and saves
// one by one. Saving the chunks would copy every record of the prefix.
type arena struct {
	chunks [][]genrec `snapshot:"shared"`
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
