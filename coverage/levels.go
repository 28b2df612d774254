package coverage

import (
	"math/bits"
	"strconv"
	"strings"
)

// Levels is a set of region sizes as a bit mask: bit l stands for k = 2^l.
type Levels uint64

// Has reports whether k is in m.
func (m Levels) Has(k int) bool {
	return k > 0 && k&(k-1) == 0 && m&(1<<uint(bits.TrailingZeros(uint(k)))) != 0
}

// Ks lists the region sizes in m in increasing order.
func (m Levels) Ks() []int {
	var ks []int
	for x := uint64(m); x != 0; x &= x - 1 {
		ks = append(ks, 1<<bits.TrailingZeros64(x))
	}
	return ks
}

// Count is the number of region sizes in m.
func (m Levels) Count() int { return bits.OnesCount64(uint64(m)) }

func (m Levels) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range m.Ks() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(k))
	}
	b.WriteByte('}')
	return b.String()
}
