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
}

func (s *segment) end() uint64 { return s.seq + uint64(s.len) }

// queue is the retransmission queue: a growable ring of segments in
// sequence order, from snd_una to snd_nxt.
type queue struct {
	buf  []segment
	head int
	n    int
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
