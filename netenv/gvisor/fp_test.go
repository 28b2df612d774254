package gvisor

import (
	"slices"
	"testing"
)

// gvisorCandidates are the oracles that found a candidate bug of gVisor's
// (doc.go, "Known departures and candidate bugs", says where in gVisor's
// source): cubic-reno-friendly (cubic.go getCwnd drops the fraction of
// each ACK's growth) and stall (snd.go postXmit reschedules the tail-loss
// probe on writes that send nothing).
var gvisorCandidates = []string{"cubic-reno-friendly", "stall"}

// TestGvisorCampaignHits replays seeds of the 2,000-simulation gVisor
// CUBIC campaign of issue 46 (testdata/fp-*.json) whose hit was not one
// of gVisor's known departures, with every oracle on: those of a harness
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
		{"fp-stall-1859.json", "stall", true,
			"every application write that cannot send pushes gVisor's tail-loss probe (which replaced the retransmission timer) 2·SRTT away (snd.go postXmit, rack.go schedulePTO): a lost segment waits 74 s"},
	} {
		t.Run(tc.seed, func(t *testing.T) {
			hits, first := runOracles(t, "testdata/"+tc.seed)
			for n, c := range hits {
				t.Logf("%s: %d hits, the first at %v", n, c, first[n])
			}
			if tc.fires && !slices.Contains(gvisorCandidates, tc.oracle) {
				t.Errorf("%s is no candidate bug of gvisorCandidates", tc.oracle)
			}
			if got := hits[tc.oracle] > 0; got != tc.fires {
				t.Errorf("%s fires: %v (%d hits, the first at %v), want %v: %s", tc.oracle, got, hits[tc.oracle], first[tc.oracle], tc.fires, tc.why)
			}
		})
	}
}
