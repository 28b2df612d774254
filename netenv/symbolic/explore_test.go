package symbolic

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// settings are the reduction settings every test compares.
var settings = []struct {
	name   string
	red    string
	byNode bool
}{
	{"none", "none", false},
	{"S", "S", false},
	{"Ce", "Ce", false},
	{"Cc", "Cc", false},
	{"Coc", "Coc", false},
	{"C", "C", false},
	{"I", "I", false},
	{"SC", "SC", false},
	{"SCI", "SCI", false},
	{"I/node", "I", true},
	{"SCI/node", "SCI", true},
	{"H", "H", false},
	{"SCH", "SCH", false},
}

// bruteForce runs every delay vector of a one- or two-variable window on netenv's
// default scheduler (the binary heap, which knows nothing of this package)
// and returns each vector's outcome.
func bruteForce(t *testing.T, c *compiled) map[[2]int64]string {
	t.Helper()
	var mu sync.Mutex
	out := map[[2]int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	lo, hi := c.lo[0], c.hi[0]
	lo1, hi1 := c.lo[1], c.hi[1] // 0, 0 for one variable
	for worker := int64(0); worker < 2; worker++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for a := lo + worker; a <= hi; a += 2 {
				for b := lo1; b <= hi1; b++ {
					w := [MaxVars]int64{a, b}
					o, err := c.simulate(context.Background(), nil, &w, nil)
					if err != nil {
						errs <- err
						return
					}
					k := c.key(o)
					mu.Lock()
					out[[2]int64{a, b}] = k
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return out
}

// checkClasses checks that the branches partition the delay space and that
// each vector's outcome is its class's outcome.
//
// approx accepts what the report flags: a diverged branch's class (a
// handler computed a delay from the uncertain delays) is an approximation,
// so only the other classes are checked, and vectors that only diverged
// classes claim are let pass.
func checkClasses(t *testing.T, name string, rep *Report, truth map[[2]int64]string, approx bool) {
	t.Helper()
	if !rep.Complete {
		t.Fatalf("%s: incomplete exploration", name)
	}
	if len(rep.BranchList) != rep.Branches {
		t.Fatalf("%s: %d branches kept of %d", name, len(rep.BranchList), rep.Branches)
	}
	bad := 0
	for v, want := range truth {
		x := []int64{v[0], v[1]}
		var in []int
		// A merged run's region has the outcomes below the state it
		// reached: its vectors must give one of the outcomes found.
		for i := range rep.MergedList {
			if classHolds(rep.MergedList[i].cons, x) {
				in = append(in, -1-i)
			}
		}
		for i := range rep.BranchList {
			b := &rep.BranchList[i]
			if approx && b.Diverged {
				continue
			}
			if classHolds(b.cons, x) {
				in = append(in, i)
			}
		}
		switch {
		case approx && len(in) == 0 && rep.Diverged > 0:
			// Only diverged classes claim this vector: their
			// approximation is flagged.
		case len(in) != 1:
			t.Errorf("%s: d=%v lies in %d classes %v (negative: merged runs), want exactly 1", name, v, len(in), in)
			bad++
		case in[0] < 0:
			if !slices.Contains(rep.Outcomes, want) {
				t.Errorf("%s: d=%v in merged region %d gives %q, which the exploration never found", name, v, -1-in[0], want)
				bad++
			}
		case rep.BranchList[in[0]].Outcome != want:
			t.Errorf("%s: d=%v: class %d says %q, the simulator says %q", name, v, in[0], rep.BranchList[in[0]].Outcome, want)
			bad++
		}
		if bad > 10 {
			t.FailNow()
		}
	}
	// Witnesses are integer vectors of their own class.
	for _, b := range rep.BranchList {
		if approx && b.Diverged {
			continue
		}
		x := []int64{b.w[0], b.w[1]}
		for k := range b.cons {
			if !b.cons[k].holds(x) {
				t.Fatalf("%s: branch %d's witness %v violates %s", name, b.ID, x, b.cons[k].format(2))
			}
		}
		if want := truth[[2]int64{b.w[0], b.w[1]}]; want != b.Outcome {
			t.Fatalf("%s: branch %d's witness gives %q, the branch says %q", name, b.ID, want, b.Outcome)
		}
	}
}

// classHolds reports whether x satisfies every constraint of a class.
func classHolds(cons []lincon, x []int64) bool {
	for k := range cons {
		if !cons[k].holds(x) {
			return false
		}
	}
	return true
}

func distinct(truth map[[2]int64]string) []string {
	var out []string
	for _, v := range truth {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func testBruteForce(t *testing.T, sc *Scenario, minOutcomes int) {
	t.Helper()
	bruteForceSettings(t, sc, minOutcomes, false)
}

// bruteForceSettings compares every reduction setting with brute force;
// approx: see checkClasses.
func bruteForceSettings(t *testing.T, sc *Scenario, minOutcomes int, approx bool) {
	t.Helper()
	bruteForceCheck(t, sc, minOutcomes, approx, flagsAllowed)
}

// flagRule is what bruteForceCheck allows of flagged branches.
type flagRule int

const (
	// flagsAllowed: branches may be diverged or concretized (brute force
	// judges their classes).
	flagsAllowed flagRule = iota
	// noDiverged: no branch diverged; concretized ones may be (a window
	// whose timers at an absolute time abstime.go follows, after RTT
	// samples rtt.go cannot).
	noDiverged
	// noFlags: no branch diverged or concretized (a window whose
	// RTT-dependent timers rtt.go follows exactly).
	noFlags
)

// bruteForceCheck is bruteForceSettings with a rule for flagged branches.
func bruteForceCheck(t *testing.T, sc *Scenario, minOutcomes int, approx bool, flags flagRule) {
	c, err := sc.compile()
	if err != nil {
		t.Fatal(err)
	}
	truth := bruteForce(t, c)
	if want := int((c.hi[0] - c.lo[0] + 1) * (c.hi[1] - c.lo[1] + 1)); len(truth) != want {
		t.Fatalf("brute force ran %d vectors, want %d", len(truth), want)
	}
	all := distinct(truth)
	if len(all) < minOutcomes {
		t.Fatalf("the window is too dull to test anything: outcomes %q", all)
	}
	counts := map[string]string{}
	for _, s := range settings {
		red, err := ParseReductions(s.red)
		if err != nil {
			t.Fatal(err)
		}
		if red.H && sc.TCP != nil {
			continue // state hashing needs a topology scenario
		}
		rep, err := Explore(context.Background(), sc, Options{Reductions: red, NodeGranularity: s.byNode})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		checkClasses(t, s.name, rep, truth, approx)
		if !slices.Equal(rep.Outcomes, all) {
			missed := 0
			for _, o := range all {
				if !slices.Contains(rep.Outcomes, o) {
					missed++
				}
			}
			t.Logf("%s: %d diverged; found %d of the %d outcomes", s.name, rep.Diverged, len(all)-missed, len(all))
			if !approx || rep.Diverged == 0 {
				t.Errorf("%s: outcomes %q, brute force %q", s.name, rep.Outcomes, all)
			}
		}
		for _, o := range rep.Outcomes {
			if !slices.Contains(all, o) {
				t.Errorf("%s: outcome %q, which no delay vector gives", s.name, o)
			}
		}
		// Divergence (a handler computed a delay from the uncertain ones)
		// cannot happen with UDP sources; TCP's RTO does it, and brute
		// force is the judge there.
		if (sc.TCP == nil && rep.Diverged != 0) || rep.SolverGaveUp != 0 {
			t.Errorf("%s: %d diverged branches, solver gave up %d times", s.name, rep.Diverged, rep.SolverGaveUp)
		}
		// RTT-dependent timers are followed exactly (rtt.go) unless
		// the report says otherwise; the forms' values never disagree
		// with the sender's.
		if flags >= noDiverged && rep.Diverged != 0 || flags == noFlags && rep.Concretized != 0 || rep.rttMismatch != 0 {
			t.Errorf("%s: %d diverged, %d concretized branches, %d mismatched RTT forms", s.name, rep.Diverged, rep.Concretized, rep.rttMismatch)
		}
		counts[s.name] = fmt.Sprintf("%d/%d/%d", rep.Branches, rep.Diverged, rep.Concretized)
	}
	t.Logf("branches/diverged/concretized: %v; outcomes %q", counts, all)
}

// TestUDP4BruteForce: n=2 over [1, 64] ms, every reduction setting, against
// every one of the 4096 delay vectors on the default heap.
func TestUDP4BruteForce(t *testing.T) {
	sc := UDP4(2, time.Millisecond, 64*time.Millisecond)
	// An end inside the window, so that outcomes differ and the end event
	// takes part in the branching.
	sc.End = 10*time.Second + 30*time.Millisecond
	testBruteForce(t, sc, 3)
}

// TestTCPBulkBruteForce: the last two data packets over [1, 64] ms.
func TestTCPBulkBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over 4096 TCP runs")
	}
	sc := TCPBulk(2, 64*time.Millisecond)
	// End the run while the last packets may still be in flight, so that
	// the delivered bytes depend on the delays.
	sc.End = tcpFullTime(t, sc) + 30*time.Millisecond
	testBruteForce(t, sc, 3)
}

// tcpFullTime is when the receiver has every byte with the smallest
// delays.
func tcpFullTime(t *testing.T, sc *Scenario) time.Duration {
	t.Helper()
	lo := float64(sc.Window.Lo) / 1e6
	d := make([]float64, sc.Window.N)
	for i := range d {
		d[i] = lo
	}
	full := fmt.Sprintf("delivered_bytes=%d", sc.TCP.Flows[0].Bytes)
	a, b := time.Duration(0), sc.End
	for b-a > time.Millisecond {
		m := (a + b) / 2
		probe := *sc
		probe.End = m
		probe.Metrics = []string{"delivered_bytes"}
		out, err := Replay(context.Background(), &probe, d, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.Outcome, full) {
			b = m
		} else {
			a = m
		}
	}
	return b
}

// udp4Tail is udp4 with both flows starting 7.5 s later (2000 sending
// intervals, so every send keeps its phase): the same last 1.5 s, hence
// the same branching, with a sixth of the events per run.
func udp4Tail(n int) *Scenario {
	sc := UDP4(n, time.Millisecond, 1024*time.Millisecond)
	t := *sc.Topology
	t.CBR = slices.Clone(t.CBR)
	t.CBR[0].Start += 7500 * time.Millisecond
	t.CBR[1].Start += 7500 * time.Millisecond
	sc.Topology = &t
	return sc
}

// TestOutcomesIdenticalAcrossReductions on windows too large for brute
// force.
func TestOutcomesIdenticalAcrossReductions(t *testing.T) {
	cases := []*Scenario{udp4Tail(3)}
	if !testing.Short() {
		cases = append(cases, TCPBulk(3, 256*time.Millisecond))
	}
	for _, sc := range cases {
		var ref []string
		counts := map[string]int{}
		for _, s := range settings {
			red, _ := ParseReductions(s.red)
			if red.H && sc.TCP != nil {
				continue
			}
			rep, err := Explore(context.Background(), sc, Options{Reductions: red, NodeGranularity: s.byNode, KeepBranches: -1})
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Complete {
				t.Fatalf("%s %s: incomplete", sc.Name, s.name)
			}
			counts[s.name] = rep.Branches
			if ref == nil {
				ref = rep.Outcomes
				if len(ref) < 2 {
					t.Fatalf("%s: only outcomes %q", sc.Name, ref)
				}
			} else if !slices.Equal(ref, rep.Outcomes) {
				t.Errorf("%s %s: outcomes %q, want %q", sc.Name, s.name, rep.Outcomes, ref)
			}
		}
		t.Logf("%s n=%d: branches %v, %d outcomes", sc.Name, sc.Window.N, counts, len(ref))
	}
}

// TestDeterministic: two explorations report the same branches.
func TestDeterministic(t *testing.T) {
	sc := UDP4(3, time.Millisecond, 1024*time.Millisecond)
	red, _ := ParseReductions("SCI")
	var prev string
	for i := 0; i < 2; i++ {
		rep, err := Explore(context.Background(), sc, Options{Reductions: red})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintln(&b, rep.Branches, rep.Comparisons, rep.AllComparisons, rep.Forks, rep.SolverCalls, rep.Outcomes, rep.Extremes)
		for _, br := range rep.BranchList {
			fmt.Fprintln(&b, br.ID, br.Witness, br.Constraints, br.Outcome)
		}
		if i > 0 && b.String() != prev {
			t.Fatal("two explorations differ")
		}
		prev = b.String()
	}
}

// TestReductionsReduce: on udp4 every technique that applies never adds
// branches, and SCI is far below none.
func TestReductionsReduce(t *testing.T) {
	got := map[string]int{}
	for _, s := range []string{"none", "S", "C", "SC", "I", "SCI"} {
		red, _ := ParseReductions(s)
		rep, err := Explore(context.Background(), UDP4(2, time.Millisecond, 1024*time.Millisecond), Options{Reductions: red, KeepBranches: -1})
		if err != nil {
			t.Fatal(err)
		}
		got[s] = rep.Branches
	}
	for _, p := range [][2]string{{"none", "S"}, {"none", "C"}, {"S", "SC"}, {"none", "I"}, {"SC", "SCI"}} {
		if got[p[1]] > got[p[0]] {
			t.Errorf("%s has %d branches, more than %s's %d", p[1], got[p[1]], p[0], got[p[0]])
		}
	}
	// SEIB Table 2, n=2: 215 → 30 (×7.2).
	if got["none"] < 7*got["SCI"] {
		t.Errorf("none %d vs SCI %d: less reduction than the paper's ×7.2", got["none"], got["SCI"])
	}
	t.Logf("udp4 n=2: %v", got)
}

func TestParseReductions(t *testing.T) {
	for in, want := range map[string]string{
		"none": "none", "": "none", "S": "S", "SCI": "SCI", "sci": "", "C": "C", "SC": "SC", "I": "I",
		"CeI": "CeI", "SCc": "SCc", "Coc": "Coc", "S,C,I": "SCI", "S+I": "SI", "ICS": "SCI", "CeCoc": "C", "X": "",
	} {
		r, err := ParseReductions(in)
		if want == "" {
			if err == nil {
				t.Errorf("ParseReductions(%q) = %v, want an error", in, r)
			}
			continue
		}
		if err != nil || r.String() != want {
			t.Errorf("ParseReductions(%q) = %v, %v; want %s", in, r, err, want)
		}
	}
}

// TestCrossBruteForce: a shared, overloaded queue makes the order of
// arrivals matter (drops, reordering), which checks that I never runs a
// component's event before an earlier arrival from another.
func TestCrossBruteForce(t *testing.T) {
	sc, err := LoadScenario("testdata/cross.yaml")
	if err != nil {
		t.Fatal(err)
	}
	testBruteForce(t, sc, 4)
}

// TestTiesBruteForce: whole-millisecond timestamps make uncertain events tie
// with others, so pseudocode 3's "=" branch, S, and the tie-break under I
// all matter.
func TestTiesBruteForce(t *testing.T) {
	sc, err := LoadScenario("testdata/ties.yaml")
	if err != nil {
		t.Fatal(err)
	}
	testBruteForce(t, sc, 4)
}

// TestTCPBulkSampled: three uncertain packets (too many vectors for brute
// force): random vectors against their classes, for every setting, with
// the event lists' order checked after every change.
func TestTCPBulkSampled(t *testing.T) {
	if testing.Short() {
		t.Skip("TCP sampling")
	}
	debugCheck = true
	defer func() { debugCheck = false }()
	early := TCPBulk(3, 64*time.Millisecond)
	early.End = tcpFullTime(t, early) + 30*time.Millisecond
	for _, sc := range []*Scenario{early, TCPBulk(3, 64*time.Millisecond)} {
		t.Run(fmt.Sprintf("end=%v", sc.End), func(t *testing.T) { testSampled(t, sc) })
	}
}

func testSampled(t *testing.T, sc *Scenario) {
	c, err := sc.compile()
	if err != nil {
		t.Fatal(err)
	}
	r := newRand(7)
	type sample struct {
		x   [MaxVars]int64
		out string
	}
	var samples []sample
	for i := 0; i < 600; i++ {
		var w [MaxVars]int64
		for k := 0; k < 3; k++ {
			w[k] = c.lo[k] + r.int64n(c.hi[k]-c.lo[k]+1)
		}
		o, err := c.simulate(context.Background(), nil, &w, nil)
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, sample{w, c.key(o)})
	}
	for _, s := range settings {
		red, _ := ParseReductions(s.red)
		if red.H {
			continue // TCP: no state hashing
		}
		rep, err := Explore(context.Background(), sc, Options{Reductions: red, NodeGranularity: s.byNode})
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for _, smp := range samples {
			x := smp.x[:3]
			n := 0
			for i := range rep.BranchList {
				b := &rep.BranchList[i]
				if classHolds(b.cons, x) {
					n++
					if b.Outcome != smp.out {
						t.Errorf("%s: d=%v: class %d says %q, the simulator says %q", s.name, x, b.ID, b.Outcome, smp.out)
					}
				}
			}
			if n != 1 {
				t.Errorf("%s: d=%v lies in %d classes", s.name, x, n)
			}
		}
		t.Logf("%s: %d branches, %d outcomes, %d diverged", s.name, rep.Branches, len(rep.Outcomes), rep.Diverged)
	}
}

// TestTCPBulkTimeoutBruteForce: windows whose delays cross the
// retransmission timeout, so that the RTO armed on their ACKs is computed
// from RTT samples that depend on the delays (rtt.go). The classes must be
// exact: no divergence, nothing concretized, every vector in exactly one
// class with its outcome.
func TestTCPBulkTimeoutBruteForce(t *testing.T) {
	if testing.Short() {
		t.Skip("brute force over thousands of TCP runs")
	}
	for _, tc := range []struct {
		name        string
		n           int
		lo, hi, res time.Duration
	}{
		{"one packet at 1 ms", 1, time.Millisecond, 4096 * time.Millisecond, time.Millisecond},
		{"two packets at 32 ms", 2, 32 * time.Millisecond, 4096 * time.Millisecond, 32 * time.Millisecond},
		// Where the timeout fires on some vectors and not on others
		// (tcp-bulk's six outcomes), at the resolution of the built-in
		// scenario, whose coefficients allow fewer divisions.
		{"two packets at 1 ms", 2, 2400 * time.Millisecond, 2527 * time.Millisecond, time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := TCPBulk(tc.n, tc.hi)
			sc.Window.Lo, sc.Window.Res = tc.lo, tc.res
			bruteForceCheck(t, sc, 3, false, noFlags)
		})
	}
}
