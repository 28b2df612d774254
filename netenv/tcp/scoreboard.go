package tcp

import "time"

// Segment flags (Linux's TCPCB_SACKED_ACKED, TCPCB_LOST,
// TCPCB_SACKED_RETRANS, TCPCB_EVER_RETRANS).
const (
	segSacked     uint8 = 1 << iota // covered by a SACK block
	segLost                         // marked lost, needs retransmission
	segRetrans                      // a retransmission is in flight
	segEverRetx                     // retransmitted at least once
	segAppLimited                   // sent while application-limited
)

// segment is one entry of the retransmission queue.
type segment struct {
	seq    uint64
	len    uint32
	flags  uint8
	sentAt time.Duration // last (re)transmission
	// Delivery-rate state at the time of sending
	// (draft-cheng-iccrg-delivery-rate-estimation §3.2).
	delivered     uint64
	deliveredTime time.Duration
	firstSentTime time.Duration
	// skip, for a SACKed segment, is a packet number such that every
	// segment from this one up to (not including) skip is SACKed: the
	// union-find link that lets SACK processing jump over runs SACKed
	// earlier (see nextUnsacked). Unused while the segment is not SACKed.
	skip uint64
}

func (s *segment) end() uint64 { return s.seq + uint64(s.len) }

// queue is the retransmission queue: a growable ring of segments in
// sequence order, from snd_una to snd_nxt, plus the two indexes RFC 6675
// processing needs so that an ACK costs what it changes, not the window:
//
//   - packet numbers: segment i of the queue is packet number first+i, so
//     a position survives cumulative ACKs (which pop the head) and the
//     loss-marking high-water mark can be kept as a packet number, as
//     Linux keeps lost_skb_hint;
//   - the SACKed runs, as union-find links (segment.skip), so that a SACK
//     block that repeats ranges SACKed before (RFC 2018 §4: the first
//     block always reports the most recent, growing, range) costs
//     O(log n) plus the newly SACKed segments;
//   - the packet numbers of the DupThresh highest SACKed segments, which
//     bound the RFC 6675 §4 IsLost() test: a segment is lost once
//     DupThresh SACKed segments lie above it.
//
// SACKed flags are only ever set while a segment is queued (this sender
// does not model SACK reneging, RFC 2018 §8, and never SACKs without the
// option), which is what makes both indexes exact.
type queue struct {
	buf   []segment
	head  int
	n     int
	first uint64 // packet number of the head segment

	// top holds the packet numbers of the highest SACKed segments,
	// highest first; nTop of them are valid.
	top  [dupThresh]uint64
	nTop int
}

func (q *queue) len() int { return q.n }

func (q *queue) at(i int) *segment {
	j := q.head + i
	if j >= len(q.buf) {
		j -= len(q.buf)
	}
	return &q.buf[j]
}

func (q *queue) push(s segment) {
	if q.n == len(q.buf) {
		nb := make([]segment, max(64, 2*len(q.buf)))
		for i := 0; i < q.n; i++ {
			nb[i] = *q.at(i)
		}
		q.buf = nb
		q.head = 0
	}
	j := q.head + q.n
	if j >= len(q.buf) {
		j -= len(q.buf)
	}
	q.buf[j] = s
	q.n++
}

func (q *queue) popFront() {
	q.head++
	if q.head == len(q.buf) {
		q.head = 0
	}
	q.n--
	q.first++
	// A popped segment can only be the lowest of the top SACKed ones.
	for q.nTop > 0 && q.top[q.nTop-1] < q.first {
		q.nTop--
	}
}

// find returns the index of the first segment whose end is beyond seq.
func (q *queue) find(seq uint64) int {
	lo, hi := 0, q.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if q.at(mid).end() <= seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// markSacked sets segment i's SACKed flag and records it in both indexes.
func (q *queue) markSacked(i int) {
	seg := q.at(i)
	seg.flags |= segSacked
	pn := q.first + uint64(i)
	seg.skip = pn + 1
	// Insert into the highest-DupThresh list (insertion sort of at most
	// DupThresh entries).
	k := q.nTop
	if k == len(q.top) {
		if pn <= q.top[k-1] {
			return
		}
		k--
	} else {
		q.nTop++
	}
	for k > 0 && q.top[k-1] < pn {
		q.top[k] = q.top[k-1]
		k--
	}
	q.top[k] = pn
}

// nextUnsacked returns the index of the first segment at or after i that
// is not SACKed (q.len() if there is none), compressing the paths it
// follows so that each SACKed run is crossed in near-constant amortized
// time (Tarjan's union-find with path compression).
func (q *queue) nextUnsacked(i int) int {
	j := i
	for j < q.n {
		seg := q.at(j)
		if seg.flags&segSacked == 0 {
			break
		}
		j = int(seg.skip - q.first)
	}
	j = min(j, q.n)
	// Path compression: point every run crossed straight at the result.
	target := q.first + uint64(j)
	for k := i; k < j; {
		seg := q.at(k)
		next := int(seg.skip - q.first)
		seg.skip = target
		k = next
	}
	return j
}

// lossLimit returns the index below which every segment has at least
// DupThresh SACKed segments above it (RFC 6675 §4 IsLost), or -1 when
// fewer than DupThresh segments are SACKed.
func (q *queue) lossLimit() int {
	if q.nTop < dupThresh {
		return -1
	}
	return int(q.top[dupThresh-1] - q.first)
}
