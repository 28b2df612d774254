package corpus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// symTestSeed is a short native run with random queuing delays, random
// loss and two phases, whose finding is the first hit of when (the seed's
// own run, as a campaign would have recorded it).
func symTestSeed(t *testing.T, when string) *Seed {
	t.Helper()
	return symTestSeedOn(t, netenv.Setup{CCAI: []string{"reno"}, Bytes: 60 * 1448, SACK: true}, when)
}

func symTestSeedOn(t *testing.T, st netenv.Setup, when string) *Seed {
	t.Helper()
	e := netenv.DefaultEnv()
	e.BW, e.Delay, e.QShape, e.QScale, e.Buffer, e.Loss = 2, 10, 2, 0.5, 100, 0
	e2 := e
	e2.BW = 1
	s := NewSeed("native", st, 7, netenv.Schedule{{Env: e, Until: 150 * time.Millisecond}, {Env: e2}})
	spec := []ConditionSpec{{Name: "hit", When: when}}
	pin, hit, _, err := PinnedSeed(context.Background(), s, &PinnedDelays{Flow: 0, Kind: "data", From: 0, DelaysMS: []float64{0}}, spec)
	if err != nil {
		t.Fatal(err)
	}
	if !hit {
		t.Fatalf("the seed's run never has %s", when)
	}
	s.Finding = pin.Finding
	s.Finding.Detail = ""
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseWindowSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want WindowSpec
		err  string
	}{
		{in: "last 3 before hit", want: WindowSpec{Kind: "before", N: 3}},
		{in: " data 120..123 ", want: WindowSpec{Kind: "data", From: 120, To: 123}},
		{in: "acks 40..41", want: WindowSpec{Kind: "ack", From: 40, To: 41}},
		{in: "last 0 before hit", err: "N = 0"},
		{in: "last 3", err: "want 'last N before hit'"},
		{in: "data 5..4", err: "0 ≤ A ≤ B"},
		{in: "data 0..99", err: "at most"},
		{in: "syn", err: "want 'last N before hit'"},
		{in: "", err: "empty"},
	} {
		got, err := ParseWindowSpec(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		got.Text = ""
		if err != nil || got != tc.want {
			t.Errorf("%q: %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	if lo, hi, err := ParseRangeMS("1..1024ms"); err != nil || lo != time.Millisecond || hi != 1024*time.Millisecond {
		t.Errorf("1..1024ms: %v %v %v", lo, hi, err)
	}
	if _, _, err := ParseRangeMS("5..1"); err == nil {
		t.Error("5..1: no error")
	}
}

// TestExploreSeed: a window before a seed's hit, explored on the seed's
// whole configuration; the per-condition class count is the engine's, and
// every written witness seed replays to its hit.
func TestExploreSeed(t *testing.T) {
	if testing.Short() {
		t.Skip("explores a window")
	}
	ctx := context.Background()
	// The condition: cwnd reaches 40 at most 2 ms later than in the seed's own
	// run; delaying the packets before the hit may postpone it.
	first := symTestSeed(t, `cwnd >= 40`)
	s := symTestSeed(t, fmt.Sprintf(`cwnd >= 40 && time <= %.9f`, float64(first.Finding.TimeNS)/1e9+0.002))
	dir := t.TempDir()
	opt := SymSeedOptions{
		Window: WindowSpec{Text: "last 2 before hit", Kind: "before", N: 2}, Flow: -1,
		Lo: time.Millisecond, Hi: 8 * time.Millisecond, Res: time.Millisecond,
		Reductions: symbolic.Reductions{S: true, Ce: true, Cc: true, Coc: true, I: true},
		OutDir:     dir, Name: "t",
	}
	var engine []symbolic.Branch
	opt.OnBranch = func(b *symbolic.Branch, _ *PinnedDelays) error { engine = append(engine, *b); return nil }
	r, err := ExploreSeed(ctx, s, opt)
	if err != nil {
		t.Fatal(err)
	}
	rep := r.Report
	if !strings.HasPrefix(rep.Snapshot, "after ") {
		t.Errorf("branches did not start from a snapshot: %s", rep.Snapshot)
	}
	if !rep.Complete || rep.Branches != len(engine) {
		t.Fatalf("complete %v, %d classes, %d seen", rep.Complete, rep.Branches, len(engine))
	}
	hitting := 0
	for _, b := range engine {
		for _, c := range b.Conditions {
			if c == "hit" {
				hitting++
			}
		}
	}
	t.Logf("window %s %d..%d: %d classes, %d hit, summary %+v", r.Kind, r.From, r.From+uint64(r.N)-1, rep.Branches, hitting, r.Conditions)
	if len(r.Conditions) != 1 || r.Conditions[0].Classes != hitting {
		t.Fatalf("summary %+v, the engine has %d hitting classes", r.Conditions, hitting)
	}
	if hitting == 0 || hitting == rep.Branches {
		t.Fatalf("%d of %d classes hit: the window should decide the condition", hitting, rep.Branches)
	}
	c := r.Conditions[0]
	if c.Seeds+c.Mismatch != hitting || len(r.Seeds) != c.Seeds || c.Seeds == 0 {
		t.Fatalf("%d seeds, %d mismatches, %d hitting classes", c.Seeds, c.Mismatch, hitting)
	}
	for i := range c.MinMS {
		if c.MinMS[i] < 1 || c.MaxMS[i] > 8 || c.MinMS[i] > c.MaxMS[i] {
			t.Fatalf("d%d: [%g, %g] outside [1, 8]", i+1, c.MinMS[i], c.MaxMS[i])
		}
	}
	// Brute force: every integer point of the box run concretely (the
	// default scheduler); the points that hit span exactly the extra
	// delays the summary gives.
	specs := seedConditions(s)
	bmin, bmax := []float64{1e9, 1e9}, []float64{-1, -1}
	points := 0
	for d1 := 1.0; d1 <= 8; d1++ {
		for d2 := 1.0; d2 <= 8; d2++ {
			_, hit, _, err := PinnedSeed(ctx, s, &PinnedDelays{Flow: r.Flow, Kind: r.Kind, From: r.From, DelaysMS: []float64{d1, d2}}, specs)
			if err != nil {
				t.Fatal(err)
			}
			if hit {
				points++
				for i, d := range []float64{d1, d2} {
					bmin[i], bmax[i] = min(bmin[i], d), max(bmax[i], d)
				}
			}
		}
	}
	if points < hitting || !slices.Equal(bmin, c.MinMS) || !slices.Equal(bmax, c.MaxMS) {
		t.Fatalf("brute force: %d points hit, extra delays %v..%v; the exploration: %d classes, %v..%v", points, bmin, bmax, hitting, c.MinMS, c.MaxMS)
	}
	for _, path := range r.Seeds {
		ws, err := ReadSeed(path)
		if err != nil {
			t.Fatal(err)
		}
		if ws.Pinned == nil || ws.Finding == nil || ws.Finding.Condition != "hit" {
			t.Fatalf("%s: pinned %v finding %v", path, ws.Pinned, ws.Finding)
		}
		got, err := Replay(ctx, ws, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Reproduced {
			t.Fatalf("%s does not reproduce: %v", path, got.Diff)
		}
		// Without its pinned delays it is the seed itself: same finding
		// time only if the window did not matter.
		if _, err := os.Stat(ws.Finding.TracePath(path)); ws.Finding.Trace == nil || err != nil {
			t.Fatalf("%s: trace %+v: %v", path, ws.Finding.Trace, err)
		}
	}
	// A witness whose pinned delays are taken away hits as the seed does:
	// the pinned window is what changes the run.
	ws, _ := ReadSeed(r.Seeds[0])
	ws.Pinned = nil
	ws.Finding.TimeNS, ws.Finding.State = s.Finding.TimeNS, s.Finding.State
	if got, err := Replay(ctx, ws, nil); err != nil || !got.Reproduced {
		t.Fatalf("without its window: %+v, %v; want the seed's hit at %d", got, err, s.Finding.TimeNS)
	}
	if filepath.Dir(r.Seeds[0]) != dir {
		t.Fatalf("seed %s not in %s", r.Seeds[0], dir)
	}
}

func TestExploreSeedUsage(t *testing.T) {
	ctx := context.Background()
	s := symTestSeed(t, `cwnd >= 10`)
	s.Finding = nil
	_, err := ExploreSeed(ctx, s, SymSeedOptions{Window: WindowSpec{Text: "last 2 before hit", Kind: "before", N: 2}, Flow: -1, Lo: time.Millisecond, Hi: 4 * time.Millisecond})
	var ue *UsageError
	if err == nil || !errors.As(err, &ue) || ue.Flag != "--window" || !strings.Contains(err.Error(), "finding") {
		t.Fatalf("no finding: %v", err)
	}
	_, err = ExploreSeed(ctx, s, SymSeedOptions{Window: WindowSpec{Text: "data 100..101", Kind: "data", From: 100, To: 101}, Flow: -1, Lo: time.Millisecond, Hi: 4 * time.Millisecond})
	if err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), "0..59") {
		t.Fatalf("data beyond the flow: %v", err)
	}
}

// TestExploreSeedTopologies: the window is explored on a seed's own
// topology and flows, and its witnesses replay.
func TestExploreSeedTopologies(t *testing.T) {
	if testing.Short() {
		t.Skip("explores windows")
	}
	ctx := context.Background()
	for _, topo := range []string{netenv.TopoDumbbell, netenv.TopoParkingLot} {
		st := netenv.Setup{CCAI: []string{"cubic", "reno"}, Topology: topo, Bytes: 40 * 1448, SACK: true}
		s := symTestSeedOn(t, st, `flow == 1 && cwnd >= 20`)
		r, err := ExploreSeed(ctx, s, SymSeedOptions{
			Window: WindowSpec{Text: "data 4..5", Kind: "data", From: 4, To: 5}, Flow: -1,
			Lo: time.Millisecond, Hi: 4 * time.Millisecond, Res: time.Millisecond,
			Reductions: symbolic.Reductions{S: true, Ce: true, Cc: true, Coc: true, I: true}, OutDir: t.TempDir(), Name: topo,
		})
		if err != nil {
			t.Fatalf("%s: %v", topo, err)
		}
		if r.Flow != 1 || r.Report.Branches == 0 || !r.Report.Complete || len(r.Seeds) == 0 {
			t.Fatalf("%s: flow %d, %d classes (complete %v), %d seeds", topo, r.Flow, r.Report.Branches, r.Report.Complete, len(r.Seeds))
		}
		t.Logf("%s: %d classes, %+v", topo, r.Report.Branches, r.Conditions)
		ws, err := ReadSeed(r.Seeds[len(r.Seeds)-1])
		if err != nil {
			t.Fatal(err)
		}
		if got, err := Replay(ctx, ws, nil); err != nil || !got.Reproduced || ws.Topology != topo {
			t.Fatalf("%s: replay %+v, %v (topology %q)", topo, got, err, ws.Topology)
		}
	}
}

// TestExploreSeedFlowAtHit: with FlowAtHit the window goes on the flow
// whose state record is at the hit time (ACT's symbolic step), whichever
// flow the seed's finding is on.
func TestExploreSeedFlowAtHit(t *testing.T) {
	if testing.Short() {
		t.Skip("explores windows")
	}
	ctx := context.Background()
	st := netenv.Setup{CCAI: []string{"cubic", "reno"}, Topology: netenv.TopoDumbbell, Bytes: 40 * 1448, SACK: true}
	s := symTestSeedOn(t, st, `flow == 1 && cwnd >= 20`)
	at := map[int]time.Duration{1: time.Duration(s.Finding.TimeNS)}
	at[0] = time.Duration(symTestSeedOn(t, st, `flow == 0 && cwnd >= 20`).Finding.TimeNS)
	if at[0] == at[1] {
		t.Fatalf("both flows' hits at %v: the test cannot tell them apart", at[0])
	}
	for _, want := range []int{0, 1} {
		r, err := ExploreSeed(ctx, s, SymSeedOptions{
			Window: WindowSpec{Text: "last 2 before hit", Kind: "before", N: 2}, Flow: FlowAtHit, At: at[want],
			Lo: time.Millisecond, Hi: 4 * time.Millisecond, Res: time.Millisecond, MaxBranches: 4,
		})
		if err != nil {
			t.Fatalf("hit of flow %d at %v: %v", want, at[want], err)
		}
		if r.Flow != want {
			t.Errorf("hit of flow %d at %v: the window is on flow %d", want, at[want], r.Flow)
		}
	}
	_, err := ExploreSeed(ctx, s, SymSeedOptions{Window: WindowSpec{Text: "data 4..5", Kind: "data", From: 4, To: 5}, Flow: FlowAtHit,
		Lo: time.Millisecond, Hi: 4 * time.Millisecond})
	var ue *UsageError
	if !errors.As(err, &ue) || ue.Flag != "--flow" {
		t.Fatalf("FlowAtHit with a data window: %v", err)
	}
}

// TestExploreSeedBruteForce: on a box where classes hold several points,
// the classes that hit cover exactly the points that hit when run
// concretely (the default scheduler): same extreme extra delays, and at
// least as many points as classes.
func TestExploreSeedBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every point of a box")
	}
	ctx := context.Background()
	first := symTestSeed(t, `cwnd >= 40`)
	s := symTestSeed(t, fmt.Sprintf(`cwnd >= 40 && time <= %.9f`, float64(first.Finding.TimeNS)/1e9+0.002))
	const hi = 24
	r, err := ExploreSeed(ctx, s, SymSeedOptions{
		Window: WindowSpec{Text: "last 2 before hit", Kind: "before", N: 2}, Flow: -1,
		Lo: time.Millisecond, Hi: hi * time.Millisecond, Res: time.Millisecond,
		Reductions: symbolic.Reductions{S: true, Ce: true, Cc: true, Coc: true, I: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := r.Conditions[0]
	bmin, bmax := []float64{1e9, 1e9}, []float64{-1, -1}
	points := 0
	for d1 := 1.0; d1 <= hi; d1++ {
		for d2 := 1.0; d2 <= hi; d2++ {
			_, hit, _, err := PinnedSeed(ctx, s, &PinnedDelays{Flow: r.Flow, Kind: r.Kind, From: r.From, DelaysMS: []float64{d1, d2}}, seedConditions(s))
			if err != nil {
				t.Fatal(err)
			}
			if hit {
				points++
				for i, d := range []float64{d1, d2} {
					bmin[i], bmax[i] = min(bmin[i], d), max(bmax[i], d)
				}
			}
		}
	}
	t.Logf("%d classes (%d diverged), %d hit; %d of %d points hit", r.Report.Branches, r.Report.Diverged, c.Classes, points, hi*hi)
	if points < c.Classes || !slices.Equal(bmin, c.MinMS) || !slices.Equal(bmax, c.MaxMS) {
		t.Fatalf("brute force: %d points hit, extra delays %v..%v; the exploration: %d classes, %v..%v", points, bmin, bmax, c.Classes, c.MinMS, c.MaxMS)
	}
}
