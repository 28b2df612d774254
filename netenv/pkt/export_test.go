package pkt

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// slowStartExport is a recorded run of ten segments, sent at 1 s and each
// ACKed 100 ms later, and optionally a loss of the second segment that
// three SACKs reveal.
func slowStartExport(loss bool, checks []Check) *Export {
	const mss = 1448
	start := time.Second
	x := &Export{Header: []string{"test"}, Congestion: "cubic", MSS: mss, SACK: true, HandshakeRTT: 100 * ms,
		Write: 100 * mss, SndBuf: 4 << 20, Start: start, Checks: checks}
	at := start + 100*ms
	if !loss {
		for i := uint64(1); i <= 10; i++ {
			x.Acks = append(x.Acks, CapturedAck{At: at, Ack: i * mss, TSEcr: start + 1})
			at += ms
		}
		return x
	}
	x.Acks = append(x.Acks, CapturedAck{At: at, Ack: mss, TSEcr: start + 1})
	for i := uint64(3); i <= 5; i++ {
		at += ms
		x.Acks = append(x.Acks, CapturedAck{At: at, Ack: mss, TSEcr: start + 1,
			SACK: []sim.SACKBlock{{Start: 2 * mss, End: i * mss}}})
	}
	return x
}

func TestExportRunsOnTheModel(t *testing.T) {
	inf := int64(ccai.InfiniteSSThresh)
	for _, tc := range []struct {
		name     string
		loss     bool
		checks   []Check
		want     Status
		wantLine string // a text of the failing assert's line
	}{
		{"slow start", false, []Check{{AfterAcks: 10, At: 1100 * ms, Asserts: []Assert{
			{Field: "tcpi_snd_cwnd", Want: 20}, {Field: "tcpi_snd_ssthresh", Want: inf}, {Field: "tcpi_ca_state", Want: int64(ccai.StateOpen)}}}}, Pass, ""},
		{"slow start, after five ACKs", false, []Check{{AfterAcks: 5, At: 1104 * ms, Asserts: []Assert{
			{Field: "tcpi_snd_cwnd", Want: 15}}}}, Pass, ""},
		{"a wrong cwnd fails at its assert", false, []Check{{AfterAcks: 10, At: 1100 * ms, Asserts: []Assert{
			{Field: "tcpi_snd_cwnd", Want: 21}}}}, Fail, "tcpi_snd_cwnd == 21"},
		{"three SACKs start recovery", true, []Check{
			{AfterAcks: 1, At: 1100 * ms, Asserts: []Assert{{Field: "tcpi_ca_state", Want: int64(ccai.StateOpen)}}},
			{AfterAcks: 4, At: 1103 * ms, Comment: "the hit", Asserts: []Assert{{Field: "tcpi_ca_state", Want: int64(ccai.StateRecovery)}}}}, Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteScript(&b, slowStartExport(tc.loss, tc.checks)); err != nil {
				t.Fatal(err)
			}
			s, err := Parse(b.String())
			if err != nil {
				t.Fatalf("the exported script does not parse: %v\n%s", err, b.String())
			}
			r := Run(s, Config{Profile: ccai.ProfileLinux})
			if r.Status != tc.want {
				t.Fatalf("got %v, want %v\n%s", r, tc.want, b.String())
			}
			if tc.want == Fail {
				lines := strings.Split(b.String(), "\n")
				if r.Line < 1 || r.Line > len(lines) || !strings.Contains(strings.Join(lines[r.Line-1:min(r.Line+3, len(lines))], "\n"), tc.wantLine) {
					t.Errorf("failed at line %d, want the block asserting %q:\n%s", r.Line, tc.wantLine, b.String())
				}
			}
		})
	}
}

func TestScriptClock(t *testing.T) {
	c := scriptClock{start: time.Second, hs: 100 * ms}
	for i, tc := range []struct {
		at   time.Duration
		want string
		ms   int64
	}{
		{time.Second, "+0.100000", tsBase + 100},
		{time.Second, "   +0", tsBase + 100},
		{time.Second + 1500*time.Nanosecond, "+0.000002", tsBase + 100},
		{time.Second + 1400*ms, "+1.399998", tsBase + 1500},
		{time.Second + 1400*ms, "   +0", tsBase + 1500},
	} {
		if ms := c.ms(tc.at); ms != tc.ms {
			t.Errorf("%d: ms(%v) = %d, want %d", i, tc.at, ms, tc.ms)
		}
		if got := c.at(tc.at); got != tc.want {
			t.Errorf("%d: at(%v) = %q, want %q", i, tc.at, got, tc.want)
		}
	}
}
