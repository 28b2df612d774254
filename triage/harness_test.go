package triage

import (
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/linux"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// lateSubject is a subject whose emulator reports lateness samples.
type lateSubject struct {
	netenv.Native
	late []time.Duration
}

func (s lateSubject) LastStats() linux.Stats { return linux.Stats{Late: s.late} }

func TestLateness(t *testing.T) {
	cfg := netenv.Config{Schedule: netenv.Schedule{{Env: netenv.Env{Delay: 20}}, {Env: netenv.Env{Delay: 10}}}}
	many := func(d time.Duration) []time.Duration {
		out := make([]time.Duration, 200)
		for i := range out {
			out[i] = d
		}
		return out
	}
	tests := []struct {
		name       string
		subj       netenv.Subject
		fail, note string
	}{
		{"a subject without an emulator", netenv.Native{}, "", ""},
		{"no sample", lateSubject{}, "", "no packet sampled"},
		{"within a fifth of 10 ms", lateSubject{late: many(300 * time.Microsecond)}, "", "p99 300µs"},
		{"p99 past it", lateSubject{late: append(many(100*time.Microsecond), many(3*time.Millisecond)...)}, "p99 3ms", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fail, note := lateness(tt.subj, cfg)
			if (tt.fail == "") != (fail == "") || !strings.Contains(fail, tt.fail) || (tt.note == "") != (note == "") || !strings.Contains(note, tt.note) {
				t.Errorf("lateness = %q, %q; want a failure with %q, a note with %q", fail, note, tt.fail, tt.note)
			}
		})
	}
}

func TestHarnessCheck(t *testing.T) {
	cfg := netenv.Config{Schedule: netenv.Schedule{{Env: netenv.Env{Delay: 20, Loss: 0.01}}}}
	sent := netenv.Result{Losses: 12, Flows: []netenv.FlowResult{{SegmentsSent: 2000}}}
	rec := func(srtt time.Duration, inFlight uint32) tcp.StateRecord {
		return tcp.StateRecord{Time: time.Second, SRTT: srtt, InFlight: inFlight}
	}
	tests := []struct {
		name     string
		when     string
		rec      tcp.StateRecord
		res      netenv.Result
		wantFail string
	}{
		{"as configured", "cwnd > 1", rec(45*time.Millisecond, 10), sent, ""},
		{"capped", "cwnd > 1", rec(45*time.Millisecond, 10), netenv.Result{Capped: true, CapReason: "events", Losses: 12, Flows: sent.Flows}, "capped: events"},
		{"delay missing", "cwnd > 1", rec(5*time.Millisecond, 10), sent, "delays"},
		{"loss missing", "cwnd > 1", rec(45*time.Millisecond, 10), netenv.Result{Flows: sent.Flows}, "losses"},
		{"send-buffer limited", "cwnd > 1", rec(45*time.Millisecond, 3000), sent, "send buffer"},
		{"send-buffer limited, the condition's subject", "cwnd > 2 * in_flight", rec(45*time.Millisecond, 3000), sent, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(cfg, &corpus.Finding{When: tt.when, TimeNS: int64(2 * time.Second)})
			r := tt.rec
			h.Observe(&r)
			fails, notes := h.check(tt.res)
			got := strings.Join(fails, "; ")
			if (tt.wantFail == "") != (got == "") || !strings.Contains(got, tt.wantFail) {
				t.Errorf("failures %q, want %q (notes %q)", got, tt.wantFail, notes)
			}
		})
	}
}
