package netenv_test

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// jumpBytes is the transfer of the observation tests: testJump knows it, so
// that it can recognise the transfer's last ACK.
const jumpBytes = 1_000_000

// jumpSize is testJump's bug: a window jump that no ordinary growth on one
// ACK comes near.
const jumpSize = 100_000

// testJump is Reno with a planted bug (issue 21): cwnd jumps by jumpSize on
// the first CongAvoid after leaving Recovery for Open or Disorder, which in
// the simulator is the ACK that leaves Recovery, and again on the
// transfer's last ACK. Its variables say how many jumps happened and when
// the last one did, so that a test can check that a condition on the
// records fires exactly on the record of each jump. It is registered here,
// in test code only.
type testJump struct {
	ccai.Reno
	leaving bool
	jumps   float64
	at      time.Duration
}

func init() {
	ccai.Register(ccai.Info{Name: "test-jump", Description: "test only: Reno whose cwnd jumps on leaving Recovery and on the last ACK",
		New: func() ccai.Algorithm { return &testJump{} }})
}

func (j *testJump) SetState(s *ccai.Sock, st ccai.CAState) {
	if s.CAState == ccai.StateRecovery && (st == ccai.StateOpen || st == ccai.StateDisorder) {
		j.leaving = true
	}
}

func (j *testJump) CongAvoid(s *ccai.Sock, acked uint32) {
	j.Reno.CongAvoid(s, acked)
	if j.leaving {
		j.leaving = false
		j.jump(s)
	}
	if s.SndUna >= jumpBytes {
		j.jump(s)
	}
}

// SSThresh and UndoCwnd see the window without the jumps, so that a
// reduction and its undo never carry a jump over to another record: a
// jump is seen only where it happens.
func (j *testJump) SSThresh(s *ccai.Sock) uint32 { return max(s.Cwnd%jumpSize>>1, 2) }

func (j *testJump) UndoCwnd(s *ccai.Sock) uint32 { return max(s.Cwnd%jumpSize, s.PriorCwnd%jumpSize) }

func (j *testJump) jump(s *ccai.Sock) {
	s.Cwnd += jumpSize
	j.jumps++
	j.at = s.Now
}

func (j *testJump) Vars() []ccai.VarDesc {
	return []ccai.VarDesc{{Name: "jumps", Doc: "jumps so far"}, {Name: "jump_at", Doc: "time of the last jump, s"}}
}

func (j *testJump) ReadVars(_ *ccai.Sock, dst []float64) {
	dst[0], dst[1] = j.jumps, j.at.Seconds()
}

// jumpWatch applies a campaign condition to every record, as a campaign
// does, and checks each record against the ground truth of testJump.
type jumpWatch struct {
	t     *testing.T
	name  string
	w     *corpus.Watcher
	fired bool
	// per run
	records, hits, jumpsSeen, exits int
	lastJumps                       float64
	last                            observe.Record
}

func (j *jumpWatch) Observe(r *observe.Record) {
	j.fired = false
	j.w.Observe(r)
	j.records++
	jumped := r.Vars[0] > j.lastJumps
	if j.fired {
		j.hits++
	}
	if jumped {
		j.jumpsSeen++
		if at := time.Duration(r.Vars[1] * 1e9); absDur(at-r.Time) > time.Microsecond {
			j.t.Errorf("%s: the record of a jump at %v is dated %v", j.name, at, r.Time)
		}
	}
	if j.fired != jumped {
		j.t.Errorf("%s: at %v the condition fired=%v but the CCAI jumped=%v (cwnd %d, jumps %v→%v, %v→%v)",
			j.name, r.Time, j.fired, jumped, r.Cwnd, j.lastJumps, r.Vars[0], r.PrevCAState, r.CAState)
	}
	if r.Reason == observe.ReasonState && r.PrevCAState == ccai.StateRecovery &&
		(r.CAState == ccai.StateOpen || r.CAState == ccai.StateDisorder) {
		j.exits++
	}
	j.lastJumps = r.Vars[0]
	j.last = *r
}

func absDur(d time.Duration) time.Duration { return max(d, -d) }

// TestEveryChangeObserved (issue 21, item 0): a condition on the records
// fires exactly when testJump's cwnd jumps, on the ACK that leaves
// Recovery and on the transfer's last ACK, dated by that ACK; the last
// record shows every jump, and records are in time order. Before the fix,
// the record of an ACK that changed ca_state was taken before CongAvoid and
// none followed it, so the jump showed up on a later ACK's record (wrong
// time) or, on the last ACK, never.
func TestEveryChangeObserved(t *testing.T) {
	specs := []corpus.ConditionSpec{{Name: "jump", When: "cwnd >= prev.cwnd + 100000"}}
	for _, tc := range []struct {
		name string
		env  netenv.Env
		sack bool
	}{
		{"sack loss", netenv.Env{Loss: 0.01, BW: 10, Delay: 20, App: 10000, Buffer: 100}, true},
		{"sack reordering", netenv.Env{Loss: 0.002, BW: 10, Delay: 20, QShape: 1, QScale: 10, App: 10000, Buffer: 100}, true},
		{"no sack loss", netenv.Env{Loss: 0.01, BW: 10, Delay: 20, App: 10000, Buffer: 100}, false},
	} {
		exits := 0
		for seed := uint64(1); seed <= 4; seed++ {
			w, err := corpus.NewWatcher([]string{"test-jump"}, specs)
			if err != nil {
				t.Fatal(err)
			}
			jw := &jumpWatch{t: t, name: tc.name, w: w}
			w.OnHit = func(int, *corpus.Condition, []float64, time.Duration) { jw.fired = true }
			prev := time.Duration(-1)
			order := observerFunc(func(r *observe.Record) {
				if r.Time < prev {
					t.Errorf("%s: record at %v after one at %v", tc.name, r.Time, prev)
				}
				prev = r.Time
				jw.Observe(r)
			})
			csRun(t, csConfig("test-jump", netenv.Constant(tc.env), jumpBytes, tc.sack, ccai.ProfileLinux, seed), order)
			// Every exit from Recovery jumps once, and the last ACK once
			// more; all of it must be in the last record.
			if want := float64(jw.exits + 1); jw.last.Vars[0] != want {
				t.Errorf("%s seed %d: the last record shows %v jumps, want %v (%d exits from Recovery + the last ACK)",
					tc.name, seed, jw.last.Vars[0], want, jw.exits)
			}
			if jw.hits != jw.jumpsSeen || jw.hits == 0 {
				t.Errorf("%s seed %d: %d hits for %d jumps", tc.name, seed, jw.hits, jw.jumpsSeen)
			}
			exits += jw.exits
		}
		if exits == 0 {
			t.Errorf("%s: no run left Recovery: the scenario tests nothing", tc.name)
		}
		t.Logf("%s: %d exits from Recovery over 4 seeds", tc.name, exits)
	}
}

type observerFunc func(*observe.Record)

func (f observerFunc) Observe(r *observe.Record) { f(r) }
