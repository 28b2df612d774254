package ns3

import (
	"bytes"
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// TestCensusNoSpuriousRTOs: on the census environments where ns-3 with
// its 1 ms clock granularity timed out thousands of times (doc.go, "The TCP
// stack as configured"), the driver's Linux-like RTO keeps ns-3's timeouts
// close to the native subject's.
func TestCensusNoSpuriousRTOs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 10 MB transfers on ns-3")
	}
	s := realSubject(t)
	for _, tc := range []struct {
		model string
		env   netenv.Env
	}{
		{"TcpCubic", netenv.Env{Loss: 5e-3, BW: 50, Delay: 100, App: 10000, Buffer: 100}},     // 3,470 RTOs before
		{"TcpLinuxReno", netenv.Env{Loss: 1e-2, BW: 50, Delay: 100, App: 10000, Buffer: 100}}, // 2,448 RTOs before
	} {
		rows, err := Census(context.Background(), s, tc.model, []netenv.Env{tc.env}, 2, 10_000_000)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_ = WriteCensus(&b, tc.model, rows)
		t.Logf("\n%s", b.String())
		r := rows[0]
		if r.RTOs[0] > 4*r.RTOs[1]+4 || r.Unfinished[0] > 0 {
			t.Errorf("%s: %d RTOs (native %d), %d unfinished", tc.model, r.RTOs[0], r.RTOs[1], r.Unfinished[0])
		}
	}
}
