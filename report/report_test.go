package report

import (
	"context"
	"encoding/json"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// tinyCampaign: two flows, short transfers, a condition that hits often
// and one that never does.
const tinyCampaign = `ccai: [cubic, reno]
bytes: 300000
budget: 64
window: 16
conditions:
  - {name: cubic-aggressive, when: "cwnd > ssthresh && target > 2*cwnd"}
  - {name: never, when: "cwnd > 1e9"}
`

// runTiny runs the tiny campaign into a new directory, writing the report
// at every checkpoint as `actfuzz run` does, and returns the directory.
func runTiny(t *testing.T, maxOOR int) (string, *act.Campaign, *act.Report) {
	t.Helper()
	c, err := act.ParseCampaign("tiny.yaml", []byte(tinyCampaign))
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	hooks := 0
	opt := act.Options{Out: out, Workers: 2, MaxOutOfRange: maxOOR, OnCheckpoint: func(r *act.Report) {
		hooks++
		if _, err := Write(out, c, []*act.Report{r}, Options{Live: r.Wall == 0, PeakRSS: PeakRSS()}); err != nil {
			t.Errorf("report at a checkpoint: %v", err)
		}
	}}
	rep, err := act.Run(context.Background(), c, opt)
	if err != nil {
		t.Fatal(err)
	}
	if hooks == 0 {
		t.Fatal("OnCheckpoint never called")
	}
	return out, c, rep
}

var (
	srcRe = regexp.MustCompile(`(?:src|href)="([^"]+)"`)
	idRe  = regexp.MustCompile(`id="([^"]+)"`)
)

// checkPage checks the sections, that every image and link resolves, and
// that the findings are newest first.
func checkPage(t *testing.T, path string, want []string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	ids := map[string]bool{}
	for _, m := range idRe.FindAllStringSubmatch(page, -1) {
		if ids[m[1]] {
			t.Errorf("id %q twice", m[1])
		}
		ids[m[1]] = true
	}
	for _, sec := range []string{"campaign", "run", "coverage", "regions", "findings", "faults"} {
		if !ids[sec] {
			t.Errorf("no section %q", sec)
		}
	}
	for _, m := range srcRe.FindAllStringSubmatch(page, -1) {
		ref := m[1]
		switch {
		case strings.HasPrefix(ref, "#"):
			if !ids[ref[1:]] {
				t.Errorf("link %s: no such id", ref)
			}
		case strings.Contains(ref, "://"):
			t.Errorf("%s: the page must not reach the network", ref)
		default:
			if _, err := os.Stat(filepath.Join(filepath.Dir(path), filepath.FromSlash(ref))); err != nil {
				t.Errorf("broken reference %s: %v", ref, err)
			}
		}
	}
	text := html.UnescapeString(page)
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	// Most important first: the ranks of a condition's groups ascend.
	ranks := regexp.MustCompile(`#(\d+) cubic-aggressive · simulation`).FindAllStringSubmatch(page, -1)
	var got []int
	for _, m := range ranks {
		n, _ := strconv.Atoi(m[1])
		got = append(got, n)
	}
	if len(got) == 0 && strings.Contains(page, "cubic-aggressive: ") {
		t.Error("groups without their rank")
	}
	if !slices.IsSorted(got) {
		t.Errorf("groups not most important first: ranks %v", got)
	}
	return page
}

// TestReport: a campaign's page, live at its checkpoints and rewritten
// from its output directory, holds every section, resolves every image and
// link, and shows the figures the run measured.
func TestReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a campaign of 64 short simulations")
	}
	out, _, rep := runTiny(t, 1)
	if len(rep.Findings) == 0 {
		t.Fatal("the tiny campaign found nothing: the page's findings are untested")
	}
	path := filepath.Join(out, Dir, "index.html")
	live := checkPage(t, path, []string{"cubic + reno on native", "cubic-aggressive", "actfuzz replay ", "actfuzz minimize ",
		"actfuzz diff ", "--vs ns3", "Environment schedule", "State at the hit", "heat-open.png", "growth-k16.png",
		"cwnd, ssthresh 16 packets; srtt, rttvar 64 ms; one ca_state", "limits of the run", "(capped at 1;", "peak memory", "[0, 0.1] step 0.000001", "fixed at 0"})
	if strings.Contains(live, "the campaign is running") {
		t.Error("the last checkpoint's page still says the campaign is running")
	}
	// From the directory, as `actfuzz report DIR` does.
	c2, reps, err := Load(out, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if reps[0].Sims != rep.Sims || len(reps[0].Findings) != len(rep.Findings) || reps[0].SubjectName() != "native" {
		t.Errorf("loaded %d sims, %d findings, subject %q; the run had %d, %d, native", reps[0].Sims, len(reps[0].Findings),
			reps[0].SubjectName(), rep.Sims, len(rep.Findings))
	}
	if _, err := Write(out, c2, reps, Options{Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	checkPage(t, path, []string{"2026-01-02 03:04:05 UTC", "not measured", fmtInt(int64(rep.Sims))})
	if _, _, err := Load(out, "man", nil); err == nil {
		t.Error("Load of a method without a checkpoint succeeded")
	}
	if _, _, err := Load(t.TempDir(), "", nil); err == nil {
		t.Error("Load of an empty directory succeeded")
	}
}

func TestFormats(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{fmtInt(0), "0"}, {fmtInt(999), "999"}, {fmtInt(1000), "1,000"}, {fmtInt(-1234567), "-1,234,567"},
		{fmtSig(0.000346399999999), "0.0003464"}, {fmtSig(23.900000000000002), "23.9"}, {fmtSig(9747), "9,747"},
		{fmtSig(1e-9), "1e-09"}, {fmtNum(2652.245557), "2652.245557"}, {fmtNum(15e6), "15,000,000"},
		{fmtNum(math.Inf(1)), "+Inf"}, {fmtPercent(0.8), "80.0 %"}, {fmtPercent(9.92e-7), "0.0000992 %"},
		{fmtBytes(3 << 20), "3.0 MiB"}, {fmtBytes(512), "512 B"},
		{act.ShellQuote("out/a-1/x.json"), "out/a-1/x.json"}, {act.ShellQuote("my dir/x.json"), "'my dir/x.json'"},
		{act.ShellQuote("it's"), `'it'\''s'`}, {anchor("cwnd > 1e7"), "cwnd___1e7"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestKMeaning(t *testing.T) {
	sp := coverage.DefaultSpace()
	for _, tc := range []struct {
		k    int
		want string
	}{
		{1, "one granule: cwnd, ssthresh 1 packets; srtt, rttvar 4 ms; one ca_state"},
		{16, "cwnd, ssthresh 16 packets; srtt, rttvar 64 ms; one ca_state"},
	} {
		if got := kMeaning(sp, tc.k); got != tc.want {
			t.Errorf("k=%d: %q, want %q", tc.k, got, tc.want)
		}
	}
}

func TestPow2AtLeast(t *testing.T) {
	for _, tc := range []struct{ n, want int }{{0, 1}, {1, 1}, {2, 2}, {3, 4}, {17, 32}, {64, 64}} {
		if got := pow2AtLeast(tc.n); got != tc.want {
			t.Errorf("pow2AtLeast(%d) = %d, want %d", tc.n, got, tc.want)
		}
	}
}

// TestFindingsLayout: conditions in name order, each one's groups newest
// first, faults in a section of their own, and the empty cases said.
func TestFindingsLayout(t *testing.T) {
	c, err := act.ParseCampaign("tiny.yaml", []byte(tinyCampaign))
	if err != nil {
		t.Fatal(err)
	}
	group := func(cond, kind string, sim int) *act.FindingGroup {
		s := &corpus.Seed{Subject: "native", CCAI: []string{"cubic", "reno"}, Profile: "linux",
			Finding: &corpus.Finding{Condition: cond, When: "cwnd > 1", Kind: kind, Flow: 1, TimeNS: 2_500_000_000,
				State: corpus.StateValues{"cwnd": 12.0, "ca_state": "open"}, Detail: "detail of " + kind}}
		return &act.FindingGroup{Seed: s, Count: 2, FirstSim: sim, Step: act.StepRandom}
	}
	for _, tc := range []struct {
		name     string
		groups   []*act.FindingGroup
		want     []string // in this order
		wantNone []string
	}{
		{"none", nil, []string{`id="summary"`, "No condition hit and no fault.", `id="findings"`, "No condition hit.", `id="faults"`, "No fault", `id="coverage"`},
			[]string{"simulation "}},
		// The summary first, then the findings most important first
		// (faults, then by hits, then the first found), then the
		// coverage detail.
		{"ordered", []*act.FindingGroup{group("b-cond", "condition", 5), group("a-cond", "condition", 3),
			group("b-cond", "condition", 9), group("", "panic", 7)},
			[]string{`id="summary"`, "1 fault group: 4 groups, one a root cause", "fault: panic", "reno on native, with 1 flow of cubic, in open",
				"a-cond", "b-cond", "b-cond", `id="findings"`,
				"a-cond: 1 group, 2 hits", "#2 a-cond · simulation 3", "b-cond: 2 groups, 4 hits", "#3 b-cond · simulation 5",
				"#4 b-cond · simulation 9", `id="faults"`, "#1 fault: panic · simulation 7", "flow 1 (reno) on native", "detail of panic", `id="coverage"`},
			[]string{"No condition hit.", "No fault"}},
		{"many groups", manyGroups(group, maxCards+3),
			[]string{"c: 13 groups, 26 hits", "the first 10 in full, the 3 others below them in a table", "#1 c · simulation 100",
				"#10 c · simulation 109", "3 more groups of c", `<td class="num">110</td>`, `<td class="num">112</td>`},
			[]string{"c · simulation 110", "c · simulation 112"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := c.Space
			st, err := coverage.NewStore(sp, coverage.Options{})
			if err != nil {
				t.Fatal(err)
			}
			st.Add([]float64{10, 5, 40, 8, 0}, coverage.Visit{})
			rep := &act.Report{Method: "act", Sims: 10, Wall: time.Second, Store: st, Series: coverage.NewSeries("act", sp),
				Findings: tc.groups}
			out := t.TempDir()
			path, err := Write(out, c, []*act.Report{rep}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			page := checkPage(t, path, nil)
			text := html.UnescapeString(page)
			at := 0
			for _, w := range tc.want {
				i := strings.Index(text[at:], w)
				if i < 0 {
					t.Errorf("page lacks %q after offset %d", w, at)
					continue
				}
				at += i
			}
			for _, w := range tc.wantNone {
				if strings.Contains(text, w) {
					t.Errorf("page has %q", w)
				}
			}
		})
	}
}

// manyGroups is n groups of condition c, at simulations 100 … 100+n−1.
func manyGroups(group func(cond, kind string, sim int) *act.FindingGroup, n int) []*act.FindingGroup {
	gs := make([]*act.FindingGroup, n)
	for i := range gs {
		gs[i] = group("c", "condition", 100+i)
	}
	return gs
}

// TestSym: a sym --json report in the directory gets a section with its
// outcomes, extremes and branches; a file of another kind is an error.
func TestSym(t *testing.T) {
	c, err := act.ParseCampaign("tiny.yaml", []byte(tinyCampaign))
	if err != nil {
		t.Fatal(err)
	}
	st, err := coverage.NewStore(c.Space, coverage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := &act.Report{Method: "act", Store: st, Series: coverage.NewSeries("act", c.Space)}
	sr := symbolic.Report{Scenario: "udp4", Reductions: "SCI", Branches: 2, Complete: true,
		Vars:     []symbolic.Var{{Name: "d1", LoMS: 1, HiMS: 1024, ResMS: 1}},
		Outcomes: []string{"received=1", "received=2"},
		Extremes: []symbolic.Extreme{{Metric: "received", Min: 1, MinBranch: 1, MinWitness: []float64{1013}, Max: 2, MaxWitness: []float64{512}}},
		BranchList: []symbolic.Branch{{ID: 0, Constraints: []string{"d1 <= 1001"}, Witness: []float64{512}, Outcome: "received=2"},
			{ID: 1, Constraints: []string{"d1 >= 1002"}, Witness: []float64{1013}, Outcome: "received=1"}}}
	for _, tc := range []struct {
		name    string
		file    any
		want    []string
		wantErr bool
	}{
		{"none", nil, nil, false},
		{"udp4", sr, []string{`id="sym"`, "sym-udp4.json", "udp4", "d1 ∈ [1, 1,024] ms step 1", "d1 <= 1001", "(1013)", "received=2"}, false},
		{"other", map[string]int{"x": 1}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if tc.file != nil {
				b, _ := json.Marshal(tc.file)
				if err := os.WriteFile(filepath.Join(out, "sym-"+tc.name+".json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path, err := Write(out, c, []*act.Report{rep}, Options{})
			if (err != nil) != tc.wantErr {
				t.Fatalf("Write: %v, want an error: %v", err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "sym-other.json") {
					t.Errorf("error %q does not name the file", err)
				}
				return
			}
			page := checkPage(t, path, tc.want)
			if tc.file == nil && strings.Contains(page, `id="sym"`) {
				t.Error("a sym section without sym output")
			}
		})
	}
}
