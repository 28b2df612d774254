package gvisor

import (
	"slices"
	"testing"
)

// gvisorCandidates are the oracles that found a candidate bug of gVisor's
// (doc.go, "Known departures and candidate bugs", says where in gVisor's
// source): cubic-reno-friendly (cubic.go getCwnd drops the fraction of
// each ACK's growth; snd.go sendData restarts cwnd at the initial window
// with data outstanding) and stall (snd.go postXmit reschedules the tail-loss
// probe on writes that send nothing).
var gvisorCandidates = []string{"cubic-reno-friendly", "stall"}

// gvisorRenoDepartures are the oracles that report gVisor Reno's own
// departures, found by the campaign of 2,000 of issue 46:
// cwnd-validation (as for CUBIC, gvisorDepartures), and reno-half and
// reduction-bound's "reduces" half: reno.go reduceSlowStartThreshold
// halves gVisor's Outstanding, which keeps segments SACKed outside a
// recovery after their cumulative ACK (google/gvisor#14092), so ssthresh
// can exceed half the flight, and cwnd itself (measured: 3 segments
// outstanding, Outstanding 28, ssthresh 14 after cwnd 10; RFC 5681 eq.
// (4) gives 2). The flight is the RFC's FlightSize, which gVisor halves
// where Linux halves cwnd: reno-half and reduction-bound bound gVisor by
// it (oracle's fill, "gvisor").
var gvisorRenoDepartures = []string{"cwnd-validation", "reno-half", "reduction-bound"}

// TestGvisorCampaignHits replays seeds of the 2,000-simulation gVisor
// CUBIC and Reno campaigns of issue 46 (testdata/fp-*.json) whose hit was
// not one of gVisor's known departures when it was found, with every
// oracle on: those of a harness
// artefact or an imprecise oracle stay silent now, and those of a
// candidate gVisor bug (gvisorCandidates; doc.go says what each is) still
// fire.
func TestGvisorCampaignHits(t *testing.T) {
	for _, tc := range []struct {
		seed, oracle string
		fires        bool
		why          string
	}{
		{"fp-cubic-beta-1312.json", "cubic-beta", false,
			"cwnd 5.8·10¹⁰ reduced to 4.1·10¹⁰, both saturated at 2³¹ − 1 in the records: the ratio is not checked"},
		{"fp-ssthresh-steady-0707.json", "ssthresh-steady", false,
			"a TLP episode (detectTLPRecovery: enter and leave recovery on one ACK) leaves TCP_INFO in SACKRecovery; RACK's reorder timer then starts a new recovery, recorded after an Open record"},
		{"fp-cubic-reno-friendly-0424.json", "cubic-reno-friendly", true,
			"gVisor's getCwnd truncates cwnd + (target − cwnd)/cwnd to an int on every ACK of one segment: cwnd 14 with a target of 20 and W_est 18.7 does not grow for 7 round trips"},
		{"fp-cubic-reno-friendly-0636.json", "cubic-reno-friendly", true,
			"snd.go sendData restarts cwnd at the initial window after an RTO without sending, with 1,800 segments outstanding, so nothing is sent and every ACK's growth toward a target of 39,086 is undone: cwnd 10 for 2 s"},
		{"fp-stall-1859.json", "stall", true,
			"every application write that cannot send pushes gVisor's tail-loss probe (which replaced the retransmission timer) 2·SRTT away (snd.go postXmit, rack.go schedulePTO): a lost segment waits 74 s"},
		{"fp-reno-reduction-bound-0005.json", "reduction-bound", false,
			"gVisor Reno halved a flight of 7 (Outstanding; 4 segments sent and not acknowledged) with cwnd 11: RFC 5681 eq. (4)'s FlightSize/2, below Linux's cwnd/2"},
		{"fp-reno-reduction-bound-0051.json", "reno-half", true,
			"gVisor Reno halved an Outstanding of 28 with 3 segments outstanding (phantom SACKed segments, google/gvisor#14092): ssthresh 14 above cwnd 10"},
		{"fp-reno-tlp-0309.json", "recovery-exit", false,
			"a TLP episode (rack.go detectTLPRecovery: enter and leave recovery on one ACK, then that ACK's growth) is a recovery entry and an Open record, not a recovery that ends above ssthresh"},
	} {
		t.Run(tc.seed, func(t *testing.T) {
			hits, first := runOracles(t, "testdata/"+tc.seed)
			for n, c := range hits {
				t.Logf("%s: %d hits, the first at %v", n, c, first[n])
			}
			if tc.fires && !slices.Contains(gvisorCandidates, tc.oracle) && !slices.Contains(gvisorRenoDepartures, tc.oracle) {
				t.Errorf("%s is neither a candidate bug (gvisorCandidates) nor a known departure (gvisorRenoDepartures)", tc.oracle)
			}
			if got := hits[tc.oracle] > 0; got != tc.fires {
				t.Errorf("%s fires: %v (%d hits, the first at %v), want %v: %s", tc.oracle, got, hits[tc.oracle], first[tc.oracle], tc.fires, tc.why)
			}
		})
	}
}
