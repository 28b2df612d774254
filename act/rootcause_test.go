package act

import (
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/oracle"
)

// TestRootCause: hits of one condition group by CCAI, subject, flow role
// and state-machine phase, not by their numbers.
func TestRootCause(t *testing.T) {
	open := func(cwnd, ssthresh float64) corpus.StateValues {
		return corpus.StateValues{"cwnd": cwnd, "ssthresh": ssthresh, "ca_state": "open", "prev_ca_state": "open", "reason": "ack"}
	}
	hit := func(cond string, flow int, st corpus.StateValues) *corpus.Finding {
		return &corpus.Finding{Kind: "condition", Condition: cond, Flow: flow, State: st}
	}
	recovery := corpus.StateValues{"cwnd": 40.0, "ssthresh": 30.0, "ca_state": "recovery", "prev_ca_state": "disorder", "reason": "ack"}
	for _, tc := range []struct {
		name       string
		ccais      []string
		a, b       *corpus.Finding
		subjB      string
		same       bool
		wantString string // of a
	}{
		{"numbers differ, phase the same", []string{"cubic"}, hit("c", 0, open(500, 100)), hit("c", 0, open(9000, 20)), "native", true,
			"cubic on native, alone, in congestion avoidance, on an ACK"},
		{"slow start and congestion avoidance", []string{"cubic"}, hit("c", 0, open(10, 100)), hit("c", 0, open(200, 100)), "native", false,
			"cubic on native, alone, in slow start, on an ACK"},
		{"another condition", []string{"cubic"}, hit("c", 0, recovery), hit("d", 0, recovery), "native", false,
			"cubic on native, alone, in recovery (entered from disorder), on an ACK"},
		{"another subject", []string{"cubic"}, hit("c", 0, recovery), hit("c", 0, recovery), "ns3", false, ""},
		{"another CCAI", []string{"cubic", "reno"}, hit("c", 0, recovery), hit("c", 1, recovery), "native", false,
			"cubic on native, with 1 flow of reno, in recovery (entered from disorder), on an ACK"},
		{"two flows of one CCAI: one role", []string{"reno", "reno"}, hit("c", 0, recovery), hit("c", 1, recovery), "native", true,
			"reno on native, with 1 flow of reno, in recovery (entered from disorder), on an ACK"},
		{"BBR's mode", []string{"bbr"}, hit("c", 0, corpus.StateValues{"ca_state": "open", "mode": "probe_bw"}),
			hit("c", 0, corpus.StateValues{"ca_state": "open", "mode": "drain"}), "native", false, "bbr on native, alone, in open, mode probe_bw"},
		{"a panic of each CCAI", []string{"cubic", "reno"}, &corpus.Finding{Kind: "panic", Flow: 0}, &corpus.Finding{Kind: "panic", Flow: 1}, "native", false,
			"cubic on native, with 1 flow of reno"},
		{"a fault and a condition", []string{"cubic"}, &corpus.Finding{Kind: "nan", Flow: 0, State: recovery}, hit("nan", 0, recovery), "native", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ra, rb := causeOf(tc.ccais, "native", tc.a), causeOf(tc.ccais, tc.subjB, tc.b)
			if (ra.key() == rb.key()) != tc.same {
				t.Errorf("keys %q and %q: same %v, want %v", ra.key(), rb.key(), ra.key() == rb.key(), tc.same)
			}
			if tc.wantString != "" && ra.String() != tc.wantString {
				t.Errorf("String %q, want %q", ra.String(), tc.wantString)
			}
		})
	}
}

// TestFindingsFit: a campaign whose two conditions hold in every
// simulation writes few groups, one trace a simulation that opened one
// (shared by its conditions), gzip-compressed and trimmed around the
// hits, each seed naming it; the output's findings stay within a bound
// that does not grow with the simulations.
func TestFindingsFit(t *testing.T) {
	c, err := ParseCampaign("t.yaml", []byte(`
ccai: [cubic]
bytes: 15000000
conditions:
  - {name: any, when: "cwnd >= 1"}
  - {name: big, when: "cwnd >= 4"}
budget: 12
window: 12
`))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	rep, err := Run(context.Background(), c, Options{Out: out, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	sims := map[int]int{} // groups each simulation opened
	for _, g := range rep.Findings {
		sims[g.FirstSim]++
	}
	shared := false
	for _, n := range sims {
		shared = shared || n >= 2
	}
	if !shared {
		t.Error("no simulation opened the groups of both conditions: a shared trace is untested")
	}
	if len(rep.Findings) > 2*4 {
		t.Errorf("%d groups of 2 conditions in 12 simulations: the hits at every start of slow start group together", len(rep.Findings))
	}
	traces, _ := filepath.Glob(filepath.Join(out, "traces", "*"+corpus.TraceExt))
	if len(traces) != len(sims) {
		t.Errorf("%d traces for %d simulations with findings", len(traces), len(sims))
	}
	for _, g := range rep.Findings {
		s, err := corpus.ReadSeed(g.Path)
		if err != nil {
			t.Fatal(err)
		}
		ref := s.Finding.Trace
		if ref == nil {
			t.Fatalf("%s: no trace", g.Path)
		}
		want := TracePath(out, "act", g.FirstSim, "")
		if got := s.Finding.TracePath(g.Path); got != want {
			t.Errorf("%s: trace %s, want the simulation's %s", g.Path, got, want)
		}
		kept := 0
		for _, sp := range ref.Kept {
			kept += sp.Last - sp.First + 1
		}
		if kept > sims[g.FirstSim]*(2*corpus.TraceWindowRecords+1) || ref.Records <= kept || !ref.Trimmed {
			t.Errorf("%s: kept %d of %d records for %d hits (%+v)", g.Path, kept, ref.Records, sims[g.FirstSim], ref)
		}
		if n := gzipLines(t, want); n != kept+1 {
			t.Errorf("%s: %d lines, %d records kept", want, n, kept)
		}
	}
	// Bounds on bytes, not results: a trace of at most 2 × 1,001 records
	// of about 150 bytes, compressed at least 2×; a seed and a plot
	// under 300 kB.
	var size int64
	for _, d := range []string{"findings", "traces"} {
		_ = filepath.Walk(filepath.Join(out, d), func(_ string, fi os.FileInfo, err error) error {
			if err == nil && !fi.IsDir() {
				size += fi.Size()
			}
			return nil
		})
	}
	if bound := int64(len(traces))*2*1001*150/2 + int64(len(rep.Findings))*300_000; size > bound {
		t.Errorf("findings and traces take %d bytes, over %d", size, bound)
	}
}

// gzipLines is the number of lines of a gzip-compressed file.
func gzipLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestRanked: groups come most important first: faults of the CCAI, the
// campaign's own conditions, conformance oracles, performance oracles,
// then the campaign's own troubles; by hits, then first simulation.
func TestRanked(t *testing.T) {
	conf, perf := oracleByKind(t, oracle.Conformance), oracleByKind(t, oracle.Performance)
	g := func(name string, f *corpus.Finding, hits, sim int) *FindingGroup {
		f.Condition = cmp.Or(f.Condition, name)
		return &FindingGroup{Seed: &corpus.Seed{Subject: "native", CCAI: []string{"cubic"}, Finding: f}, Count: hits, FirstSim: sim, key: name}
	}
	cond := func(name string) *corpus.Finding { return &corpus.Finding{Kind: "condition", Condition: name} }
	orc := func(o oracle.Oracle) *corpus.Finding {
		return &corpus.Finding{Kind: "condition", Condition: o.Name, Source: o.Source}
	}
	for _, tc := range []struct {
		name   string
		groups []*FindingGroup
		want   []string
	}{
		{"by kind", []*FindingGroup{g("cap", &corpus.Finding{Kind: "event-cap"}, 50, 0), g("perf", orc(perf), 40, 1), g("conf", orc(conf), 30, 2),
			g("mine", cond("mine"), 1, 3), g("panic", &corpus.Finding{Kind: "panic"}, 1, 4)},
			[]string{"panic", "mine", "conf", "perf", "cap"}},
		{"by hits, then first", []*FindingGroup{g("a", cond("c"), 1, 0), g("b", cond("c"), 5, 9), g("c", cond("c"), 5, 3)},
			[]string{"c", "b", "a"}},
		// An oracle's name with another source is the user's own.
		{"a user's condition named as an oracle", []*FindingGroup{g("conf", orc(conf), 9, 0), g("mine", &corpus.Finding{Kind: "condition", Condition: conf.Name, Source: "mine"}, 1, 1)},
			[]string{"mine", "conf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, g := range (&Report{Findings: tc.groups}).Ranked() {
				got = append(got, g.key)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("ranked %v, want %v", got, tc.want)
			}
		})
	}
}

// oracleByKind is an oracle of the library of kind k.
func oracleByKind(t *testing.T, k oracle.Kind) oracle.Oracle {
	t.Helper()
	for _, o := range oracle.Library() {
		if o.Kind == k {
			return o
		}
	}
	t.Fatalf("no %s oracle", k)
	return oracle.Oracle{}
}

// TestLoadGroupsRegroups: a checkpoint's groups (an older program's, by
// region) are keyed again by root cause on load: those that share one
// merge into the first found, their hits summed.
func TestLoadGroupsRegroups(t *testing.T) {
	cp := func(sim, hits int, cwnd float64, ca string) checkpointGroup {
		f := &corpus.Finding{Kind: "condition", Condition: "c", State: corpus.StateValues{"cwnd": cwnd, "ssthresh": 100.0, "ca_state": ca}}
		return checkpointGroup{Key: fmt.Sprintf("c|%d,", int(cwnd)/128), Count: hits, FirstSim: sim, Path: fmt.Sprintf("o/findings/c/act-%07d.json", sim),
			Seed: corpus.Seed{Subject: "native", CCAI: []string{"cubic"}, Finding: f}}
	}
	for _, tc := range []struct {
		name  string
		in    []checkpointGroup
		sims  []int // the groups' first simulations
		count []int
	}{
		{"one cause, three regions", []checkpointGroup{cp(7, 2, 300, "open"), cp(3, 5, 900, "open"), cp(9, 1, 2000, "open")}, []int{3}, []int{8}},
		{"two causes", []checkpointGroup{cp(1, 2, 300, "open"), cp(2, 4, 300, "recovery"), cp(5, 1, 500, "open")}, []int{1, 2}, []int{3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			groups := map[string]*FindingGroup{}
			got := loadGroups("/d", tc.in, groups)
			if len(got) != len(tc.sims) || len(groups) != len(tc.sims) {
				t.Fatalf("%d groups (%d keyed), want %d", len(got), len(groups), len(tc.sims))
			}
			for i, g := range got {
				if g.FirstSim != tc.sims[i] || g.Count != tc.count[i] || g.Path != FindingPath("/d", fmt.Sprintf("c/act-%07d.json", tc.sims[i])) || groups[g.key] != g {
					t.Errorf("group %d: first %d, %d hits, %s; want %d, %d", i, g.FirstSim, g.Count, g.Path, tc.sims[i], tc.count[i])
				}
			}
		})
	}
}
