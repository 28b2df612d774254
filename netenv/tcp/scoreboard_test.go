package tcp

import (
	"math/rand/v2"
	"testing"
)

// refMarkLost is the RFC 6675 §4 IsLost() rule by brute force over the
// whole queue: every segment that is neither SACKed, lost nor being
// retransmitted and has at least DupThresh SACKed segments above it is
// marked lost. It returns how many it marked.
func refMarkLost(segs []segment) int {
	count, limit := 0, -1
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i].flags&segSacked != 0 {
			count++
			if count >= dupThresh {
				limit = i
				break
			}
		}
	}
	marked := 0
	for i := 0; i < limit; i++ {
		if segs[i].flags&(segSacked|segLost|segRetrans) == 0 {
			segs[i].flags |= segLost
			marked++
		}
	}
	return marked
}

// TestScoreboardAgainstRescan drives the indexed scoreboard (union-find
// SACK runs, top-DupThresh SACKed list, loss-marking high-water mark) and
// a plain slice through the same random sequences of sends, SACK blocks,
// cumulative ACKs, retransmissions and undos, and checks after every step
// that the indexes agree with a brute-force rescan.
func TestScoreboardAgainstRescan(t *testing.T) {
	for _, tc := range []struct {
		name   string
		seed   uint64
		window int // segments kept in flight
		sackP  float64
		steps  int
	}{
		{"small window", 1, 8, 0.3, 3000},
		{"large window sparse sacks", 2, 400, 0.05, 3000},
		{"large window dense sacks", 3, 400, 0.6, 3000},
		{"ring wrap", 4, 70, 0.4, 6000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(tc.seed, 99))
			s := &Sender{cfg: SenderConfig{SACK: true}}
			var ref []segment
			seq := uint64(0)
			const mss = 100
			for step := 0; step < tc.steps; step++ {
				for s.q.len() < tc.window {
					s.q.push(segment{seq: seq, len: mss})
					ref = append(ref, segment{seq: seq, len: mss})
					seq += mss
				}
				switch op := r.IntN(10); {
				case op < 5: // a SACK block over a random range
					n := s.q.len()
					a := r.IntN(n)
					b := min(n, a+1+r.IntN(max(1, int(float64(n)*tc.sackP))))
					start, end := s.q.at(a).seq, s.q.at(b-1).end()
					if r.IntN(4) == 0 { // a block that cuts a segment
						start += mss / 2
					}
					for i := s.q.nextUnsacked(s.q.find(start)); i < s.q.len(); i = s.q.nextUnsacked(i + 1) {
						seg := s.q.at(i)
						if seg.seq < start {
							continue
						}
						if seg.end() > end {
							break
						}
						seg.flags &^= segLost | segRetrans
						s.q.markSacked(i)
					}
					for i := range ref {
						if ref[i].seq >= start && ref[i].end() <= end && ref[i].flags&segSacked == 0 {
							ref[i].flags &^= segLost | segRetrans
							ref[i].flags |= segSacked
						}
					}
				case op < 7: // a cumulative ACK of the first few segments
					k := r.IntN(min(s.q.len(), 1+tc.window/10) + 1)
					for range k {
						s.q.popFront()
					}
					ref = ref[k:]
				case op < 8: // retransmit a lost segment
					for i := range ref {
						if ref[i].flags&(segLost|segRetrans|segSacked) == segLost {
							ref[i].flags |= segRetrans
							s.q.at(i).flags |= segRetrans
							break
						}
					}
				case op < 9: // undo: clear every lost mark
					for i := range ref {
						ref[i].flags &^= segLost
						s.q.at(i).flags &^= segLost
					}
					s.sock.LostOut = 0
					s.lostMark = 0
				default:
				}
				before := s.sock.LostOut
				s.markLost(false)
				want := refMarkLost(ref)
				if got := int(s.sock.LostOut - before); got != want {
					t.Fatalf("step %d: markLost marked %d, rescan %d", step, got, want)
				}
				for i := range ref {
					if got := s.q.at(i).flags; got != ref[i].flags {
						t.Fatalf("step %d: segment %d flags %05b, rescan %05b", step, i, got, ref[i].flags)
					}
				}
				// nextUnsacked from a few random positions.
				for range 3 {
					i := r.IntN(len(ref) + 1)
					want := i
					for want < len(ref) && ref[want].flags&segSacked != 0 {
						want++
					}
					if got := s.q.nextUnsacked(i); got != want {
						t.Fatalf("step %d: nextUnsacked(%d) = %d, want %d", step, i, got, want)
					}
				}
			}
		})
	}
}

// TestQueueLossLimit checks the top-DupThresh SACKed list across pops.
func TestQueueLossLimit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sacked []int // indexes SACKed, in this order
		pop    int   // then pop this many from the head
		want   int
	}{
		{"none", nil, 0, -1},
		{"two", []int{5, 9}, 0, -1},
		{"three", []int{5, 9, 7}, 0, 5},
		{"four out of order", []int{9, 2, 7, 5}, 0, 5},
		{"low one ignored", []int{9, 8, 7, 1}, 0, 7},
		{"pop below", []int{9, 8, 7}, 3, 4},
		{"pop through", []int{9, 8, 6}, 7, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var q queue
			for i := range 12 {
				q.push(segment{seq: uint64(i) * 10, len: 10})
			}
			for _, i := range tc.sacked {
				q.markSacked(i)
			}
			for range tc.pop {
				q.popFront()
			}
			if got := q.lossLimit(); got != tc.want {
				t.Errorf("lossLimit = %d, want %d", got, tc.want)
			}
		})
	}
}
