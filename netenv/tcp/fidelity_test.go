package tcp

import (
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Tests of the model's fidelity to Linux's TCP sender, each shown by a
// packetdrill script of Linux's suite (netenv/pkt) as well.

type sink struct{ sent []sim.Packet }

func (k *sink) Send(p *sim.Packet) { k.sent = append(k.sent, *p) }

// rsRecorder is a CongController that keeps the rate samples it is given,
// growing nothing.
type rsRecorder struct {
	ccai.Algorithm
	samples []ccai.RateSample
}

func (r *rsRecorder) CongControl(_ *ccai.Sock, rs *ccai.RateSample) {
	r.samples = append(r.samples, *rs)
}

func newTestSender(t *testing.T, prof ccai.Profile, sack bool, alg ccai.Algorithm) (*Sender, *sink) {
	t.Helper()
	if alg == nil {
		var err error
		if alg, err = ccai.New("reno"); err != nil {
			t.Fatal(err)
		}
	}
	out := &sink{}
	s := NewSender(sim.New(nil, sim.Limits{}), SenderConfig{Flow: 1, Bytes: 100 * DefaultMSS, SACK: sack, Profile: prof, Algorithm: alg, Out: out})
	s.Established(0)
	return s, out
}

// ack delivers an ACK of cum with the given SACK blocks (in segments of
// DefaultMSS, [start, end) packet numbers).
func ack(s *Sender, cum uint64, blocks ...[2]uint64) {
	p := &sim.Packet{IsAck: true, Ack: cum * DefaultMSS}
	for _, b := range blocks {
		p.SACK[p.NSACK] = sim.SACKBlock{Start: b[0] * DefaultMSS, End: b[1] * DefaultMSS}
		p.NSACK++
	}
	s.onAck(p)
}

// An ACK whose SACK blocks make holes lost reports them in its rate sample
// (Linux's tcp_ack passes tp->lost - prior lost to tcp_rate_gen as
// rs->losses), which BBR's loss handling reads.
func TestRateSampleLosses(t *testing.T) {
	reno, _ := ccai.New("reno")
	rec := &rsRecorder{Algorithm: reno}
	s, _ := newTestSender(t, ccai.ProfileLinux, true, rec)
	// Segments 0 and 1 lost, 2..4 SACKed: the third SACKed segment makes
	// both holes lost (RFC 6675 IsLost with DupThresh 3).
	ack(s, 0, [2]uint64{2, 3})
	ack(s, 0, [2]uint64{2, 4})
	ack(s, 0, [2]uint64{2, 5})
	var got []uint32
	for _, rs := range rec.samples {
		got = append(got, rs.Losses)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 0 || got[2] != 2 {
		t.Fatalf("losses per ACK %v, want [0 0 2]", got)
	}
}

// Without SACK, a cumulative ACK after duplicate ACKs counts
// max(acked − sacked_out, 1) packets delivered, the duplicates having
// counted the others (Linux's tcp_remove_reno_sacks since 4.6), so the
// window grows once per packet (limited_transmit/limited-transmit-no-sack.pkt).
// ProfileLinux310 keeps counting every acked packet.
func TestRenoDeliveredNotDoubleCounted(t *testing.T) {
	for _, tc := range []struct {
		prof ccai.Profile
		want uint64
	}{{ccai.ProfileLinux, 3}, {ccai.ProfileLinux310, 5}} {
		s, _ := newTestSender(t, tc.prof, false, nil)
		ack(s, 0)
		ack(s, 0) // two duplicate ACKs: two packets delivered
		ack(s, 3) // the hole and the two packets the duplicates counted
		if got := s.sock.Delivered; got != tc.want {
			t.Errorf("%v: delivered %d, want %d", tc.prof, got, tc.want)
		}
	}
}

// Entering recovery on SACKs sends one retransmission, not two: PRR's
// slow-start segment needs an ACK that advanced snd_una and marked nothing
// newly lost (Linux's tcp_cwnd_reduction since 5.11;
// fast_recovery/prr-ss-30pkt-lost-1_4-11_16.pkt). ProfileLinux310 sends two.
func TestPRRSSExtraSegment(t *testing.T) {
	for _, tc := range []struct {
		prof ccai.Profile
		want int
	}{{ccai.ProfileLinux, 1}, {ccai.ProfileLinux310, 2}} {
		s, out := newTestSender(t, tc.prof, true, nil)
		ack(s, 0, [2]uint64{6, 7})
		ack(s, 0, [2]uint64{6, 8})
		n := len(out.sent)
		// Holes 0..5 lost: recovery with 3 in flight, ssthresh 5.
		ack(s, 0, [2]uint64{6, 9})
		if got := len(out.sent) - n; got != tc.want {
			t.Errorf("%v: %d segments sent on entering recovery, want %d (cwnd %d, ssthresh %d, in flight %d, sent %d)", tc.prof, got, tc.want, s.sock.Cwnd, s.sock.SSThresh, s.sock.InFlight(), len(out.sent))
		}
	}
}

// The SACK blocks of an ACK below snd_una (reordered on the path) are
// tagged (Linux's tcp_ack at old_ack runs tcp_sacktag_write_queue);
// ProfileLinux310 drops the ACK whole, as the model did.
func TestOldAckSACKTagged(t *testing.T) {
	for _, tc := range []struct {
		prof ccai.Profile
		want uint32
	}{{ccai.ProfileLinux, 1}, {ccai.ProfileLinux310, 0}} {
		s, _ := newTestSender(t, tc.prof, true, nil)
		ack(s, 2)
		ack(s, 1, [2]uint64{5, 6}) // reordered: below snd_una
		if got := s.sock.SackedOut; got != tc.want {
			t.Errorf("%v: sacked_out %d after an old ACK with SACK, want %d", tc.prof, got, tc.want)
		}
	}
}
