package tcp

import "testing"

func TestQueueRingAndFind(t *testing.T) {
	var q queue
	seq := uint64(0)
	for i := 0; i < 200; i++ {
		q.push(segment{seq: seq, len: 1000})
		seq += 1000
		if i%3 == 0 {
			q.popFront()
		}
	}
	if q.len() != 200-67 {
		t.Fatalf("len %d", q.len())
	}
	for i := 1; i < q.len(); i++ {
		if q.at(i).seq != q.at(i-1).end() {
			t.Fatalf("ring out of order at %d", i)
		}
	}
	first := q.at(0).seq
	for _, tc := range []struct {
		seq  uint64
		want int
	}{{first, 0}, {first + 999, 0}, {first + 1000, 1}, {first + 50500, 50}, {seq, q.len()}} {
		if got := q.find(tc.seq); got != tc.want {
			t.Errorf("find(%d) = %d, want %d", tc.seq, got, tc.want)
		}
	}
}
