package symbolic

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/fnv"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// pacedTCP is a short BBR transfer (BBR paces every packet, so the sender
// arms its send timer at nextPace) whose window is packet from.
func pacedTCP(from int) *Scenario {
	return &Scenario{
		Name: "paced",
		TCP: &TCPSpec{
			Flows: []netenv.Flow{{CCA: "bbr", Bytes: 30 * 1448}},
			Env:   netenv.Env{BW: 10, Delay: 20, Buffer: 100, App: 10000},
			SACK:  true,
		},
		End:     20 * time.Second,
		Window:  Window{N: 1, Select: "range", From: from, Lo: time.Millisecond, Hi: time.Second, Res: time.Millisecond},
		Metrics: []string{"cwnd", "done"},
	}
}

// TestAbsoluteTimersBruteForce: windows early in application-limited and
// paced transfers, where the sender arms its send timer at an absolute
// time (the application's next write, the pacing deadline) on ACKs whose
// arrival the window moves. Before abstime.go the timer took the form of
// the ACK that armed it, and children forked on comparisons with it
// diverged: 1 to 47 branches in each of the 77 windows and settings here
// (no vector was misclassified: divergence flagged them). Now no branch
// may diverge, and every vector must lie in exactly one class with its
// outcome, in every setting. (Branches whose RTT estimator is
// concretized, rtt.go, are allowed: they are checked like the others.)
func TestAbsoluteTimersBruteForce(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   *Scenario
	}{
		{"app 1 Mbit/s from 2", appLimitedTCP(1, 2)},
		{"app 2 Mbit/s from 1", appLimitedTCP(2, 1)},
		{"app 2 Mbit/s from 3", appLimitedTCP(2, 3)},
		{"app 2 Mbit/s from 5", appLimitedTCP(2, 5)},
		{"paced from 3", pacedTCP(3)},
		{"paced from 5", pacedTCP(5)},
		{"paced from 6", pacedTCP(6)},
	} {
		t.Run(tc.name, func(t *testing.T) { bruteForceCheck(t, tc.sc, 2, false, noDiverged) })
	}
}

// clockCase is one flow's instant and now, as forms over one delay x in
// units of u: c + a·u·x.
type clockCase struct {
	name   string
	c1, a1 int64 // the instant (nextPace, or appSince)
	c2, a2 int64 // now
	k      int64 // the gap, or q
}

// clockCases cross each other inside [0, 64] or not at all.
var clockCases = []clockCase{
	{"constant instant, now moving up", 40_000_000, 0, 1_000_000, 64, 3_000_000},
	{"instant moving up, constant now", 7_000_000, 64, 50_000_000, 0, 12_000_000},
	{"both moving, crossing at 32", 0, 128, 32_000_000, 64, 1_000_000},
	{"both moving, never crossing", 2_000_000_000, 64, 0, 64, 1_000_000},
	{"same form", 5_000_000, 64, 5_000_000, 64, 2_000_000},
}

// clockRun runs f on a sched whose path has witness x = w, with the flow's
// instant and now set from tc, and returns the path and the sched.
func clockRun(w int64, tc clockCase, f func(s *sched, inst form)) (*path, *sched) {
	const res, scale = 1_000_000, 64
	u := int64(res / scale)
	x := &explorer{n: 1, res: res, unit: u, vt: newVecTable(scale)}
	x.lo[0], x.hi[0] = 0, 64
	p := x.newPath(&job{witness: [MaxVars]int64{w}}, false)
	s := &sched{p: p, vt: x.vt}
	inst := form{at: tc.c1 + tc.a1*u*w}
	inst.a[0] = int32(tc.a1)
	var nv [MaxVars]int32
	nv[0] = int32(tc.a2)
	s.hasCur, s.curAt, s.curVec = true, tc.c2+tc.a2*u*w, x.vt.intern(nv)
	f(s, inst)
	return p, s
}

// valueAt is a form's value at x = y.
func (f *form) valueAt(s *sched, y int64) int64 {
	return s.constPart(f) + int64(f.a[0])*s.p.res*y
}

// TestClockFormsExact: the forms abstime.go gives nextPace, the
// application's timer and the pacing timer are, on every vector of the
// class the decisions leave (for every witness), the values the sender
// computes there: max(nextPace, now) + gap, max(appSince + q, now), and
// the sender's comparison now < nextPace is the same on the whole class.
func TestClockFormsExact(t *testing.T) {
	for _, tc := range clockCases {
		t.Run(tc.name, func(t *testing.T) {
			for w := int64(0); w <= 64; w++ {
				var pace, timer form
				var wait bool
				p, s := clockRun(w, tc, func(s *sched, inst form) {
					now := s.nowForm()
					// nextPace = max(inst, now) + k, then the
					// sender compares now < nextPace.
					s.clockFor(0).pace = inst
					s.PaceAdvance(0, time.Duration(tc.k), time.Duration(max(inst.at, now.at)+tc.k))
					pace = s.clocks[0].pace
					s.clocks[0].pace = inst
					wait = now.at < inst.at
					s.PaceCheck(0, nil, wait)
					// The application's timer: appSince = inst.
					s.clocks[0].app = inst
					s.ArmAppWrite(0, nil, time.Duration(inst.at+tc.k))
					timer = form{at: s.arm.at, a: s.arm.a}
				})
				if s.rttMismatch != 0 || p.concretized {
					t.Fatalf("w=%d: %d mismatches, concretized %v", w, s.rttMismatch, p.concretized)
				}
				u := p.res
				for y := int64(0); y <= 64; y++ {
					if !classHolds(p.pc, []int64{y}) {
						continue
					}
					inst, now := tc.c1+tc.a1*u*y, tc.c2+tc.a2*u*y
					if got, want := pace.valueAt(s, y), max(inst, now)+tc.k; got != want {
						t.Fatalf("w=%d, x=%d: nextPace's form gives %d, the sender %d", w, y, got, want)
					}
					if got := now < inst; got != wait {
						t.Fatalf("w=%d, x=%d: now < nextPace is %v, %v at the witness, on one class", w, y, got, wait)
					}
					if got, want := timer.valueAt(s, y), max(inst+tc.k, now); got != want {
						t.Fatalf("w=%d, x=%d: the application timer's form gives %d, ScheduleAt %d", w, y, got, want)
					}
				}
			}
		})
	}
}

// slowAppTCP is a short transfer whose application writes slower than one
// segment per round trip, so that the sender sends runts (RFC 896 lets a
// short segment go when nothing is in flight) whose size is what the
// application wrote by the ACK that freed it.
func slowAppTCP(app float64, from int) *Scenario {
	sc := appLimitedTCP(app, from)
	sc.Name = "slow-app"
	sc.TCP.Flows = []netenv.Flow{{CCA: "reno", Bytes: 8 * 1448}}
	sc.Metrics = []string{"cwnd", "ssthresh", "done", "delivered_bytes"}
	return sc
}

// TestSlowAppFlagged: windows of slow applications, where a class is only
// exact when nothing is flagged: runts whose size follows an ACK's
// arrival (AppCut), RTT estimators past their divisions (rtt.go), the
// sender's own comparisons (Diverged). Every vector that an unflagged
// class claims must give that class's outcome and event count, in every
// setting. Before abstime.go, the application's timer took the ACK's form
// and no runt was flagged: under Cc, three vectors (d = 303…305 ms) of the
// 0.2 Mbit/s window from packet 1 were in an unflagged class of 51 events
// where the simulator runs 52.
func TestSlowAppFlagged(t *testing.T) {
	for _, tc := range []struct {
		app  float64
		from int
	}{
		{0.1, 1}, {0.1, 3}, {0.2, 1}, {0.2, 3},
	} {
		t.Run(fmt.Sprintf("app %v from %d", tc.app, tc.from), func(t *testing.T) {
			sc := slowAppTCP(tc.app, tc.from)
			c, err := sc.compile()
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				key    string
				events uint64
			}
			truth := map[int64]result{}
			for x := c.lo[0]; x <= c.hi[0]; x++ {
				w := [MaxVars]int64{x}
				o, err := c.simulate(context.Background(), nil, &w, nil)
				if err != nil {
					t.Fatal(err)
				}
				truth[x] = result{c.key(o), o.events}
			}
			for _, s := range settings {
				red, _ := ParseReductions(s.red)
				if red.H {
					continue // state hashing needs a topology scenario
				}
				rep, err := Explore(context.Background(), sc, Options{Reductions: red, NodeGranularity: s.byNode})
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if rep.rttMismatch != 0 {
					t.Errorf("%s: %d mismatched forms", s.name, rep.rttMismatch)
				}
				bad := 0
				for x, want := range truth {
					for i := range rep.BranchList {
						b := &rep.BranchList[i]
						if b.Diverged || b.Concretized || !classHolds(b.cons, []int64{x}) {
							continue
						}
						if b.Outcome != want.key || b.Events != want.events {
							t.Errorf("%s: d=%d: unflagged class %d says %q in %d events, the simulator %q in %d", s.name, x, b.ID, b.Outcome, b.Events, want.key, want.events)
							bad++
						}
					}
				}
				if bad > 0 {
					t.Fatalf("%s: %d vectors in unflagged classes that do not give their outcome", s.name, bad)
				}
			}
		})
	}
}

// orderHeap is the default heap that also hashes the order of the events
// it hands out (node, kind, tag and the packet's sequence numbers: no
// times), so that brute force can check a class's claim that its vectors
// execute the same events in the same order, not only that they reach
// the same outcome.
type orderHeap struct {
	*sim.Heap
	h hash.Hash64
	b [40]byte
}

func (o *orderHeap) PopMin() *sim.Event {
	e := o.Heap.PopMin()
	if e != nil {
		b := &o.b
		*b = [40]byte{}
		binary.LittleEndian.PutUint32(b[0:], uint32(e.Node))
		b[4], b[5] = byte(e.Kind), e.Tag
		if p := e.Pkt; p != nil {
			binary.LittleEndian.PutUint64(b[8:], p.Seq)
			binary.LittleEndian.PutUint64(b[16:], p.Ack)
			binary.LittleEndian.PutUint32(b[24:], p.Len)
			b[28] = p.Hop
			if p.IsAck {
				b[29] = 1
			}
		}
		o.h.Write(b[:])
	}
	return e
}

// runFacts is what one delay vector's run does: its outcome, its event
// count and the order of its events.
type runFacts struct {
	key    string
	events uint64
	order  uint64
}

// bruteFacts runs every vector of a one-variable window.
func bruteFacts(t *testing.T, c *compiled) map[int64]runFacts {
	t.Helper()
	out := map[int64]runFacts{}
	for x := c.lo[0]; x <= c.hi[0]; x++ {
		w := [MaxVars]int64{x}
		oh := &orderHeap{Heap: sim.NewHeap(64), h: fnv.New64a()}
		o, err := c.simulate(context.Background(), oh, &w, nil)
		if err != nil {
			t.Fatal(err)
		}
		out[x] = runFacts{c.key(o), o.events, oh.h.Sum64()}
	}
	return out
}

// TestPacingRateFlagged: BBR windows where the pacing rate, and so the
// pacing gap, depends on the delays (abstime.go): through SRTT, from which
// BBR paces its first flight, when the window is the SYN or the SYN-ACK;
// through delivery-rate and RTT samples later. Every vector of a class
// reported without flags must give the class's outcome, event count and
// event order, in every setting. The hazard cases are windows where the
// pacing gap is the only thing flagged: there, vectors of the classes it
// flags must disagree (else the case no longer shows that the flag is
// needed). Before the flag existed (commit b1e3b4f) those classes were
// reported exact: on bbr-syn.yaml, 27 of the 1000 vectors lay in them
// and ran otherwise without reductions (1 with another outcome, 26 with
// another event order), 34 under Cc and 152 under the other settings
// with C or I; `sym --verify 16 --reductions none` found one class
// unsound while reporting nothing concretized.
func TestPacingRateFlagged(t *testing.T) {
	synAck := pacedTCP(0)
	synAck.Name = "bbr-syn-ack"
	synAck.TCP.Handshake = true
	synAck.TCP.Flows[0].Bytes = 1448
	synAck.Window = Window{N: 1, Select: "kind", Kind: "syn-ack", Lo: 1024 * time.Microsecond, Hi: 1024 * time.Millisecond, Res: 1024 * time.Microsecond}
	synAck.End = 800 * time.Millisecond
	fromFile, err := LoadScenario("testdata/bbr-syn.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		sc     *Scenario
		hazard bool
	}{
		{"bbr-syn.yaml", fromFile, true},
		{"syn-ack, one segment", synAck, true},
		{"paced from 6", pacedTCP(6), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.sc.compile()
			if err != nil {
				t.Fatal(err)
			}
			truth := bruteFacts(t, c)
			for _, s := range settings {
				red, _ := ParseReductions(s.red)
				if red.H {
					continue // state hashing needs a topology scenario
				}
				rep, err := Explore(context.Background(), tc.sc, Options{Reductions: red, NodeGranularity: s.byNode})
				if err != nil {
					t.Fatalf("%s: %v", s.name, err)
				}
				if !rep.Complete || rep.rttMismatch != 0 || len(rep.BranchList) != rep.Branches {
					t.Fatalf("%s: complete %v, %d mismatched forms, %d of %d branches kept", s.name, rep.Complete, rep.rttMismatch, len(rep.BranchList), rep.Branches)
				}
				bad, hidden, paceOnly := unflaggedDisagree(t, s.name, c, truth, rep)
				if bad > 0 {
					t.Errorf("%s: %d vectors in unflagged classes that do not run as their class", s.name, bad)
				}
				if tc.hazard && (paceOnly == 0 || hidden == 0) {
					t.Errorf("%s: %d classes flagged only for the pacing gap, %d of their vectors disagree: the window no longer needs the flag", s.name, paceOnly, hidden)
				}
				t.Logf("%s: %d branches, %d diverged, %d concretized (%d for the pacing gap, %d for it alone); %d vectors of those %d disagree with their class", s.name, rep.Branches, rep.Diverged, rep.Concretized, rep.PaceConcretized, paceOnly, hidden, paceOnly)
			}
		})
	}
}

// unflaggedDisagree counts the vectors of unflagged classes that do not
// run as their class's witness does (outcome, event count, event order:
// bad, each reported), those of classes flagged only for the pacing gap
// that do not (hidden), and those classes (paceOnly).
func unflaggedDisagree(t *testing.T, name string, c *compiled, truth map[int64]runFacts, rep *Report) (bad, hidden, paceOnly int) {
	t.Helper()
	for i := range rep.BranchList {
		b := &rep.BranchList[i]
		if b.paceOnly {
			paceOnly++
		}
		if b.Diverged || b.Concretized && !b.paceOnly {
			continue
		}
		want := truth[b.w[0]]
		for x := c.lo[0]; x <= c.hi[0]; x++ {
			if !classHolds(b.cons, []int64{x}) || truth[x] == want {
				continue
			}
			if b.paceOnly {
				hidden++
				continue
			}
			bad++
			if bad <= 5 {
				t.Errorf("%s: x=%d: unflagged class %d (witness %d) says %q in %d events; the simulator %q in %d, same order %v", name, x, b.ID, b.w[0], b.Outcome, b.Events, truth[x].key, truth[x].events, truth[x].order == want.order)
			}
		}
	}
	return bad, hidden, paceOnly
}

// TestAppCheckChildrenExact: windows early in application-limited BBR
// transfers, where the sender's comparison of now with the instant its
// application will have written the next segment forks. Before AppCheck
// that comparison was decided in ArmAppWrite only, after the sender had
// taken its step, and a child forked there took the other step and was
// flagged Diverged: 5, 5 and 4 branches of the 1 Mbit/s windows from
// packets 1, 3 and 5, 1 of each 2 Mbit/s window, without reductions. Now
// the comparison is decided where the sender makes it, every child
// replays its parent's decisions, and no branch may diverge in any
// setting; every vector must lie in exactly one class with its outcome,
// and those of unflagged classes must run as their class's witness
// (event count and order).
func TestAppCheckChildrenExact(t *testing.T) {
	for _, tc := range []struct {
		app  float64
		from int
	}{
		{1, 1}, {1, 3}, {1, 5}, {2, 1}, {2, 3},
	} {
		t.Run(fmt.Sprintf("app %v from %d", tc.app, tc.from), func(t *testing.T) {
			sc := appLimitedTCP(tc.app, tc.from)
			sc.TCP.Flows[0].CCA = "bbr"
			bruteForceCheck(t, sc, 2, false, noDiverged)
			c, err := sc.compile()
			if err != nil {
				t.Fatal(err)
			}
			truth := bruteFacts(t, c)
			rep, err := Explore(context.Background(), sc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if bad, _, _ := unflaggedDisagree(t, "none", c, truth, rep); bad > 0 {
				t.Errorf("%d vectors in unflagged classes that do not run as their class", bad)
			}
		})
	}
}
