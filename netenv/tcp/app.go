package tcp

import (
	"math/bits"
	"time"
)

// The application and the send buffer. The application writes the
// transfer at AppRate into a send buffer of SndBuf bytes, as a blocking
// write(2) into a Linux socket does: the buffer holds the data written and
// not yet acknowledged (Linux's sk_wmem_queued against sk_sndbuf, from
// snd_una to write_seq), and a write that finds it full blocks until an
// ACK frees space (sk_stream_wait_memory). A blocked application produces
// nothing while it waits: when the buffer frees, it goes on at its rate
// from that moment. So the application rate of every phase of a schedule
// matters: a fast application cannot have written the whole transfer in
// the first milliseconds, and a later slow phase makes the flow
// application-limited mid-transfer.

// DefaultSndBuf is the send buffer: Linux's tcp_wmem[2] default (4 MB),
// the ceiling of its send-buffer autotuning (tcp_sndbuf_expand). Linux
// counts skb truesize, which is a little more than the payload; this
// counts payload bytes. Autotuning below the ceiling is not modelled.
const DefaultSndBuf = 4 << 20

// SetAppRate changes the application rate (bit/s, 0 = unlimited) from now
// on, as an environment switch does.
func (s *Sender) SetAppRate(rate uint64) {
	now := s.sim.Now()
	if s.appRate == 0 {
		// An unlimited application has written what the send buffer
		// took and waits on it for the rest (until appWake).
		s.appBase = s.sndBufLimit()
		s.appBlocked = s.appBase < s.cfg.Bytes
	} else {
		s.appBase = s.appWrite(now)
	}
	s.setAppSince(now)
	s.appRate = rate
	if !s.stats.Done {
		s.output()
	}
}

// appWrite is how many bytes the application has written by now. It
// notes when the application blocks on the full send buffer.
func (s *Sender) appWrite(now time.Duration) uint64 {
	limit := s.sndBufLimit()
	if s.appRate == 0 {
		return limit
	}
	if s.appBlocked {
		return s.appBase
	}
	p := s.appProduced(now)
	if limit < s.cfg.Bytes {
		s.noteAppBlock(limit, p >= limit)
	}
	if p >= limit && limit < s.cfg.Bytes {
		// Blocked: what it has written is what fitted.
		s.appBlocked = true
		s.appBase = limit
		s.setAppSince(now)
		return limit
	}
	return min(p, limit)
}

// sndBufLimit is how far the application can have written: while the
// buffer holds less than SndBuf bytes, a write adds a whole segment (Linux
// checks sk_stream_memory_free, then copies a full skb), so the limit is
// snd_una + SndBuf rounded up to a whole segment.
func (s *Sender) sndBufLimit() uint64 {
	mss := uint64(s.cfg.MSS)
	return min((s.sndUna+s.cfg.SndBuf+mss-1)/mss*mss, s.cfg.Bytes)
}

// appWake runs when an ACK has advanced snd_una: a blocked write returns
// (space was freed) and the application produces again from now on.
func (s *Sender) appWake(now time.Duration) {
	if s.appBlocked {
		s.appBlocked = false
		s.setAppSince(now)
	}
}

// appProduced is how many bytes the application has produced by now at
// its rate, without the send buffer's limit.
func (s *Sender) appProduced(now time.Duration) uint64 {
	if s.appRate == 0 {
		return s.cfg.Bytes
	}
	// rate [bit/s] × elapsed [ns] / 8e9, in 128-bit arithmetic.
	hi, lo := bits.Mul64(s.appRate, uint64(now-s.appSince))
	const div = 8 * uint64(time.Second)
	if hi >= div {
		return s.cfg.Bytes
	}
	q, _ := bits.Div64(hi, lo, div)
	return min(s.appBase+q, s.cfg.Bytes)
}

// appTimeFor is when the application will have produced n bytes.
func (s *Sender) appTimeFor(n uint64) time.Duration {
	need := n - s.appBase
	hi, lo := bits.Mul64(need, 8*uint64(time.Second))
	if hi >= s.appRate {
		return MaxRTO * 1000
	}
	q, r := bits.Div64(hi, lo, s.appRate)
	if r != 0 {
		q++
	}
	return s.appSince + time.Duration(q)
}
