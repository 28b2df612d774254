package corpus

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// timesOf keeps the time of each record it sees.
type timesOf []int64

func (t *timesOf) Observe(r *tcp.StateRecord) { *t = append(*t, int64(r.Time)) }

// recordList keeps the index (Cwnd) of each record it sees.
type recordList struct{ got []int }

func (l *recordList) Observe(r *tcp.StateRecord) { l.got = append(l.got, int(r.Cwnd)) }

// TestTraceWindow: a stored trace keeps the records within the window of
// each hit, the hit's own record always among them, and says which.
// Records i = 0 … 99 are at i ms, of flow i%2; Cwnd is i.
func TestTraceWindow(t *testing.T) {
	ms := func(i int) int64 { return int64(i) * int64(time.Millisecond) }
	span := func(a, b int) TraceSpan { return TraceSpan{First: a, Last: b, FromNS: ms(a), ToNS: ms(b)} }
	for _, tc := range []struct {
		name   string
		window int
		hits   []TraceHit
		spans  []TraceSpan
		hitIdx []int // the records of the hits
	}{
		{"no hit", 5, nil, nil, nil},
		{"one in the middle", 5, []TraceHit{{ms(50), 0}}, []TraceSpan{span(45, 55)}, []int{50}},
		{"at the start", 5, []TraceHit{{ms(0), 0}}, []TraceSpan{span(0, 5)}, []int{0}},
		{"at the end", 5, []TraceHit{{ms(99), 1}}, []TraceSpan{span(94, 99)}, []int{99}},
		{"two close: one span", 5, []TraceHit{{ms(60), 0}, {ms(50), 0}}, []TraceSpan{span(45, 65)}, []int{50, 60}},
		{"two apart: two spans", 3, []TraceHit{{ms(10), 0}, {ms(80), 0}}, []TraceSpan{span(7, 13), span(77, 83)}, []int{10, 80}},
		// Flow 1's record at 50 ms does not exist: the next record
		// after it is the hit's.
		{"between records", 2, []TraceHit{{ms(50), 1}}, []TraceSpan{span(49, 53)}, []int{51}},
		{"window 0", 0, []TraceHit{{ms(30), 0}}, []TraceSpan{span(30, 30)}, []int{30}},
		{"window over the run", 500, []TraceHit{{ms(50), 0}}, []TraceSpan{span(0, 99)}, []int{50}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l recordList
			w := NewTraceWindow(&l, tc.window, tc.hits)
			for i := range 100 {
				w.Observe(&tcp.StateRecord{Time: time.Duration(ms(i)), Flow: int32(i % 2), Cwnd: uint32(i), Vars: []float64{float64(i)}})
			}
			ref := w.Ref("t.csv.gz")
			if !slices.Equal(ref.Kept, tc.spans) {
				t.Errorf("kept %v, want %v", ref.Kept, tc.spans)
			}
			var want []int
			for _, s := range tc.spans {
				for i := s.First; i <= s.Last; i++ {
					want = append(want, i)
				}
			}
			if !slices.Equal(l.got, want) {
				t.Errorf("passed on %v, want %v", l.got, want)
			}
			for _, h := range tc.hitIdx {
				if !slices.Contains(l.got, h) {
					t.Errorf("the hit's record %d is not in the window %v", h, ref.Kept)
				}
			}
			if ref.Records != 100 || ref.Trimmed != (len(want) < 100) || ref.Window != tc.window {
				t.Errorf("ref %+v", ref)
			}
		})
	}
}

// TestWriteSimulationSharesTrace: two findings of one simulation are
// written with one trace, compressed, that both name, holding the
// records around both hits; each has its plot.
func TestWriteSimulationSharesTrace(t *testing.T) {
	dir := t.TempDir()
	base := testSeed(42)
	base.Bytes = 15_000_000
	// The run's record times, to hit at two of them far apart.
	var at timesOf
	if _, err := Replay(context.Background(), base, &at); err != nil {
		t.Fatal(err)
	}
	if len(at) < 8*TraceWindowRecords {
		t.Fatalf("%d records: too few to trim", len(at))
	}
	mk := func(cond string, i int) *Seed {
		s := *base
		s.Finding = &Finding{Condition: cond, When: "cwnd >= 1", Kind: "condition", TimeNS: at[i], Flow: 0}
		return &s
	}
	seeds := []*Seed{mk("a", len(at)/4), mk("b", 3*len(at)/4)}
	paths := []string{filepath.Join(dir, "findings", "a", "act-0000007.json"), filepath.Join(dir, "findings", "b", "act-0000007.json")}
	trace := filepath.Join(dir, "traces", "act-0000007"+TraceExt)
	if err := WriteSimulation(context.Background(), netenv.Native{}, seeds, paths, trace); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(filepath.Join(dir, "traces"))
	if len(ents) != 1 {
		t.Fatalf("%d trace files, want 1", len(ents))
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := OpenTrace(f, trace)
	if err != nil {
		t.Fatal(err)
	}
	var times []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		times = append(times, strings.SplitN(sc.Text(), ",", 2)[0])
	}
	for i, p := range paths {
		s, err := ReadSeed(p)
		if err != nil {
			t.Fatal(err)
		}
		ref := s.Finding.Trace
		if ref == nil || s.Finding.TracePath(p) != trace {
			t.Fatalf("%s: trace %+v, want %s", p, ref, trace)
		}
		kept := 0
		inside := false
		for _, sp := range ref.Kept {
			kept += sp.Last - sp.First + 1
			inside = inside || sp.FromNS <= seeds[i].Finding.TimeNS && seeds[i].Finding.TimeNS <= sp.ToNS
		}
		if !inside {
			t.Errorf("%s: hit at %d ns outside the kept %+v", p, seeds[i].Finding.TimeNS, ref.Kept)
		}
		if len(times) != kept+1 || !ref.Trimmed || kept != 2*(2*TraceWindowRecords+1) || ref.Records != len(at) {
			t.Errorf("%s: %d lines for %d kept records of %d (%+v)", p, len(times), kept, ref.Records, ref)
		}
		if _, err := os.Stat(strings.TrimSuffix(p, ".json") + ".png"); err != nil {
			t.Errorf("no plot: %v", err)
		}
	}
	if times[0] != "time_s" {
		t.Errorf("header %q", times[0])
	}
}
