package symbolic

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
)

// seedScenario is a window on a seed-like configuration (TCPSpec.Base):
// a shipped topology, random loss and queuing delays from the seed's
// streams, two flows, the window's delays added on top.
func seedScenario(topo, cca string, n int) *Scenario {
	env := netenv.DefaultEnv()
	env.BW, env.Delay, env.Loss, env.QShape, env.QScale, env.Buffer = 2, 10, 0.002, 1, 1, 40
	base := &netenv.Config{
		Seed: 3, Schedule: netenv.Constant(env), Topology: topo, SACK: true,
		Flows: []netenv.Flow{{CCA: cca, Bytes: 150_000}, {CCA: "reno", Bytes: 100_000}},
	}
	return &Scenario{
		Name:   "seed-" + topo,
		TCP:    &TCPSpec{Base: base},
		End:    60 * time.Second,
		Window: Window{Flow: 0, N: n, Select: "last", Lo: time.Millisecond, Hi: 30 * time.Millisecond, Res: time.Millisecond},
	}
}

// agreeCase is one exploration compared with and without snapshots.
type agreeCase struct {
	name string
	sc   *Scenario
	red  string
}

func agreeCases() []agreeCase {
	var cases []agreeCase
	for _, cca := range ccai.Names() {
		if strings.HasPrefix(cca, "test-") {
			continue // TestUserCCAISnapshot's
		}
		sc := TCPBulk(2, 40*time.Millisecond)
		sc.TCP.Flows[0].CCA = cca
		cases = append(cases, agreeCase{"tcp-bulk/" + cca, sc, "SC"})
	}
	for _, topo := range []string{netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot} {
		for _, red := range []string{"none", "SCI"} {
			cases = append(cases, agreeCase{"seed/" + topo + "/" + red, seedScenario(topo, "cubic", 2), red})
		}
	}
	ack := TCPBulk(2, 40*time.Millisecond)
	ack.Window = Window{Flow: 0, N: 2, Select: "kind", Kind: "ack", From: 60, Lo: time.Millisecond, Hi: 40 * time.Millisecond, Res: time.Millisecond}
	cases = append(cases, agreeCase{"tcp-bulk/acks", ack, "SCI"})
	for _, red := range []string{"none", "SC", "SCI", "SCH"} {
		cases = append(cases, agreeCase{"udp4/" + red, UDP4(2, time.Millisecond, 64*time.Millisecond), red})
	}
	return cases
}

// TestSnapshotAgrees explores every case twice, every run from time zero
// and every run but the first from the prefix snapshot, and wants the same
// report: the same branches in the same order with the same constraints,
// witnesses, outcomes, event counts, divergence flags and trace hashes,
// and the same counts of comparisons, forks, runs and events. Every
// registered CCAI is covered, every shipped topology (with random delays
// from the seed's streams), an ACK window, and the UDP scenario under
// every reduction family, state hashing included.
func TestSnapshotAgrees(t *testing.T) {
	for _, tc := range agreeCases() {
		t.Run(tc.name, func(t *testing.T) {
			got, want := exploreBoth(t, tc.sc, tc.red)
			if !strings.HasPrefix(got.Snapshot, "after ") {
				t.Fatalf("no snapshot: %q", got.Snapshot)
			}
			if got.Runs > 2 && got.EventsSimulated >= want.EventsSimulated {
				t.Errorf("simulated %d events with the snapshot, %d without", got.EventsSimulated, want.EventsSimulated)
			}
			t.Logf("%d branches, snapshot %s, %d → %d events simulated", got.Branches, got.Snapshot, want.EventsSimulated, got.EventsSimulated)
		})
	}
}

// exploreBoth explores sc with every run from time zero and with the
// prefix snapshot (if it can be taken), and checks that the reports agree:
// the same branches in the same order with the same constraints,
// witnesses, outcomes, event counts, divergence flags and trace hashes,
// and the same counts of comparisons, forks, runs and events.
func exploreBoth(t *testing.T, sc *Scenario, reductions string) (got, want *Report) {
	t.Helper()
	red, err := ParseReductions(reductions)
	if err != nil {
		t.Fatal(err)
	}
	c, err := sc.compile()
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Reductions: red, MaxBranches: 300, hashTrace: true}
	ctx := context.Background()
	opt.NoSnapshot = true
	if want, err = explore(ctx, c, opt); err != nil {
		t.Fatal(err)
	}
	opt.NoSnapshot = false
	if got, err = explore(ctx, c, opt); err != nil {
		t.Fatal(err)
	}
	if want.EventsSimulated != want.Events {
		t.Errorf("without snapshots %d of %d events simulated", want.EventsSimulated, want.Events)
	}
	sum := func(r *Report) string {
		return fmt.Sprintf("branches %d complete %v cmp %d overlap %d all %d forks %d solver %d/%d runs %d events %d diverged %d merged %d outcomes %v",
			r.Branches, r.Complete, r.Comparisons, r.Overlapping, r.AllComparisons, r.Forks, r.SolverCalls, r.SolverGaveUp,
			r.Runs, r.Events, r.Diverged, r.Merged, r.Outcomes)
	}
	if a, b := sum(got), sum(want); a != b {
		t.Fatalf("reports differ:\n got %s\nwant %s", a, b)
	}
	for i := range want.BranchList {
		a, b := got.BranchList[i], want.BranchList[i]
		if b.hash == "" {
			t.Fatal("no trace hash")
		}
		if fmt.Sprint(a.ID, a.Constraints, a.Witness, a.Outcome, a.Events, a.Diverged, a.hash) != fmt.Sprint(b.ID, b.Constraints, b.Witness, b.Outcome, b.Events, b.Diverged, b.hash) {
			t.Fatalf("branch %d differs:\n got %+v\nwant %+v", i, a, b)
		}
	}
	return got, want
}

// closureReno is Reno that skips every third window increase, counting
// in a closure: a snapshot cannot see the count, so Take must refuse it and
// every branch run from time zero.
type closureReno struct{ bump func() uint32 }

func newClosureReno() (*closureReno, *uint32) {
	n := new(uint32)
	return &closureReno{bump: func() uint32 { *n++; return *n }}, n
}

func (*closureReno) Init(*ccai.Sock)              {}
func (*closureReno) SSThresh(s *ccai.Sock) uint32 { return ccai.RenoSSThresh(s) }
func (r *closureReno) CongAvoid(s *ccai.Sock, acked uint32) {
	if r.bump()%3 != 0 {
		ccai.RenoCongAvoid(s, acked)
	}
}
func (*closureReno) SetState(*ccai.Sock, ccai.CAState) {}
func (*closureReno) CwndEvent(*ccai.Sock, ccai.Event)  {}
func (*closureReno) UndoCwnd(s *ccai.Sock) uint32      { return ccai.RenoUndoCwnd(s) }

// savingReno is closureReno with ccai.StateSaver: it saves the count
// itself, so snapshots work.
type savingReno struct {
	closureReno
	n *uint32
}

func (r *savingReno) SaveState() func() {
	v := *r.n
	return func() { *r.n = v }
}

var _ ccai.StateSaver = (*savingReno)(nil)

func init() {
	ccai.Register(ccai.Info{Name: "test-closure", Description: "test: state in a closure", New: func() ccai.Algorithm {
		r, _ := newClosureReno()
		return r
	}})
	ccai.Register(ccai.Info{Name: "test-saver", Description: "test: state in a closure, saved by SaveState", New: func() ccai.Algorithm {
		r, n := newClosureReno()
		return &savingReno{closureReno: *r, n: n}
	}})
}

// TestUserCCAISnapshot: a user CCAI whose state hides in a closure turns
// snapshots off (the report says why) with the same results; the same CCAI
// with StateSaver is snapshotted, with the same results.
func TestUserCCAISnapshot(t *testing.T) {
	for _, tc := range []struct{ cca, want string }{
		{"test-closure", "off: snapshot: "},
		{"test-saver", "after "},
	} {
		t.Run(tc.cca, func(t *testing.T) {
			sc := seedScenario(netenv.TopoSingleLink, tc.cca, 2)
			sc.TCP.Base.Schedule[0].Env.Loss = 0.01
			// Mid-transfer, where the window still grows.
			sc.Window.Select, sc.Window.Kind, sc.Window.From = "kind", "data", 40
			sc.Metrics = []string{"flow0.ssthresh", "flow0.cwnd", "flow0.retransmits"}
			got, _ := exploreBoth(t, sc, "SCI")
			if !strings.HasPrefix(got.Snapshot, tc.want) {
				t.Fatalf("snapshot %q, want %q…", got.Snapshot, tc.want)
			}
			t.Logf("%d branches, %d outcomes; snapshot %s", got.Branches, len(got.Outcomes), got.Snapshot)
		})
	}
}
