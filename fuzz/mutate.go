package fuzz

import (
	"encoding/binary"
	"math/rand/v2"
)

// mutator applies byte-level havoc mutations in the style of AFL, libFuzzer
// and Go's native fuzzer. It knows nothing of the input layout beyond the
// 8-byte word size (its interesting values and word operations are aligned
// like the integers of any binary format); it is the same mutator for every
// feedback, so that comparisons measure the feedback only.
type mutator struct {
	rng    *rand.Rand
	maxLen int
}

var interesting8 = []uint8{0, 1, 16, 32, 64, 100, 127, 128, 255}
var interesting64 = []uint64{0, 1, 2, 7, 8, 100, 1000, 1 << 16, 1 << 31, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63, 1<<64 - 1}

// mutate returns a mutated copy of in; other is a second corpus entry for
// splicing (may be nil).
func (m *mutator) mutate(in, other []byte) []byte {
	out := append(make([]byte, 0, m.maxLen), in...)
	n := 1 << m.rng.IntN(4) // 1, 2, 4 or 8 stacked mutations
	for i := 0; i < n; i++ {
		out = m.one(out, other)
	}
	if len(out) > m.maxLen {
		out = out[:m.maxLen]
	}
	return out
}

func (m *mutator) one(b, other []byte) []byte {
	r := m.rng
	if len(b) == 0 {
		return append(b, byte(r.Uint32()))
	}
	switch r.IntN(12) {
	case 0: // flip a bit
		i := r.IntN(len(b))
		b[i] ^= 1 << r.IntN(8)
	case 1: // random byte
		b[r.IntN(len(b))] = byte(r.Uint32())
	case 2: // interesting byte
		b[r.IntN(len(b))] = interesting8[r.IntN(len(interesting8))]
	case 3, 4: // add or subtract a small number to an integer of 1, 2, 4 or 8 bytes
		size := 1 << r.IntN(4)
		if len(b) < size {
			size = 1
		}
		i := r.IntN(len(b) - size + 1)
		delta := uint64(1 + r.IntN(35))
		if r.IntN(2) == 0 {
			delta = -delta
		}
		big := r.IntN(2) == 0
		switch size {
		case 1:
			b[i] += byte(delta)
		case 2:
			if big {
				binary.BigEndian.PutUint16(b[i:], binary.BigEndian.Uint16(b[i:])+uint16(delta))
			} else {
				binary.LittleEndian.PutUint16(b[i:], binary.LittleEndian.Uint16(b[i:])+uint16(delta))
			}
		case 4:
			if big {
				binary.BigEndian.PutUint32(b[i:], binary.BigEndian.Uint32(b[i:])+uint32(delta))
			} else {
				binary.LittleEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(b[i:])+uint32(delta))
			}
		case 8:
			if big {
				binary.BigEndian.PutUint64(b[i:], binary.BigEndian.Uint64(b[i:])+delta)
			} else {
				binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])+delta)
			}
		}
	case 5: // interesting or random word at an aligned offset
		if len(b) >= 8 {
			i := 8 * r.IntN(len(b)/8)
			v := r.Uint64()
			if r.IntN(2) == 0 {
				v = interesting64[r.IntN(len(interesting64))]
			}
			binary.LittleEndian.PutUint64(b[i:], v)
		}
	case 6: // insert random bytes
		if len(b) < m.maxLen {
			n := 1 + r.IntN(min(8, m.maxLen-len(b)))
			i := r.IntN(len(b) + 1)
			ins := make([]byte, n)
			for k := range ins {
				ins[k] = byte(r.Uint32())
			}
			b = append(b[:i], append(ins, b[i:]...)...)
		}
	case 7: // delete a range
		if len(b) > 1 {
			n := 1 + r.IntN(min(16, len(b)-1))
			i := r.IntN(len(b) - n + 1)
			b = append(b[:i], b[i+n:]...)
		}
	case 8: // copy a chunk within the input (overwrite)
		n := 1 + r.IntN(min(16, len(b)))
		src, dst := r.IntN(len(b)-n+1), r.IntN(len(b)-n+1)
		copy(b[dst:dst+n], b[src:src+n])
	case 9: // duplicate a chunk (insert)
		if len(b) < m.maxLen {
			n := 1 + r.IntN(min(16, len(b), m.maxLen-len(b)))
			src, dst := r.IntN(len(b)-n+1), r.IntN(len(b)+1)
			chunk := append([]byte(nil), b[src:src+n]...)
			b = append(b[:dst], append(chunk, b[dst:]...)...)
		}
	case 10: // swap two bytes
		i, j := r.IntN(len(b)), r.IntN(len(b))
		b[i], b[j] = b[j], b[i]
	case 11: // splice: a prefix of this input, the rest from another
		if len(other) > 0 {
			cut := r.IntN(min(len(b), len(other)) + 1)
			b = append(b[:cut], other[cut:]...)
		} else {
			b[r.IntN(len(b))] = byte(r.Uint32())
		}
	}
	return b
}

// randomInput is a fresh input of full length (decodes like a uniform draw
// from P: the same distribution as RAN, with a random number of phases).
func randomInput(rng *rand.Rand) []byte {
	b := make([]byte, MaxInputLen)
	for i := 0; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b
}
