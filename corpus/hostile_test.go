package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// hostileSeeds are the seeds of testdata/hostile (issue 48: files written
// by someone who wants actfuzz to hang, lie or leak) with what reading
// them must say. Every file there has an entry.
var hostileSeeds = map[string]string{
	"when-nested-map.json":         `finding: condition "big": when: 1:5: map(…) is not allowed`,
	"when-repeat.json":             `when: 1:5: repeat(…) is not allowed`,
	"when-let-doubling.json":       `when: 1:5: let a: bindings are not allowed`,
	"when-clock.json":              `when: 1:1: now(…) is not allowed`,
	"name-escape.json":             `character 4 (U+001B) is not printable`,
	"name-bidi.json":               `character 4 (U+202E) is not printable`,
	"name-long.json":               `name: 300 characters`,
	"name-fault-dir.json":          `fault-… names the directories of fault findings`,
	"fault-condition-no-when.json": `finding.when: missing`,
	"trace-environ.json":           `link trace "environ":1:1: want a millisecond timestamp`,
	"trace-bad-hash.json":          `content does not match its sha256`,
}

// secrets are what no message may show: the environment a trace held, a
// terminal escape, a name of hundreds of characters.
var secrets = []string{"hunter2", "HOME=", "\x1b", "\u202e", strings.Repeat("n", 100), strings.Repeat("x", 100)}

func TestReadSeedHostile(t *testing.T) {
	files, err := filepath.Glob("testdata/hostile/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, ok := hostileSeeds[filepath.Base(f)]; !ok {
			t.Errorf("%s: no expectation in hostileSeeds", f)
		}
	}
	dir := t.TempDir()
	gen := generatedSeeds(t, dir)
	for name, want := range hostileSeeds {
		gen[filepath.Join("testdata/hostile", name)] = want
	}
	for path, want := range gen {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := ReadSeed(path)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("error %v, want %q", err, want)
			}
			for _, s := range secrets {
				if strings.Contains(err.Error(), s) {
					t.Errorf("the message shows %.20q: %v", s, err)
				}
			}
		})
	}
}

// generatedSeeds writes the hostile seeds too large to keep in testdata
// into dir and returns their expected errors.
func generatedSeeds(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	write := func(name string, s *Seed, want string) {
		p := filepath.Join(dir, name)
		if err := s.Write(p); err != nil {
			t.Fatal(err)
		}
		out[p] = want
	}
	s := testSeed(1)
	for len(s.Schedule) <= netenv.MaxPhases {
		ph := s.Schedule[len(s.Schedule)-1]
		s.Schedule[len(s.Schedule)-1].Until = ph.Until + 1000
		s.Schedule = append(s.Schedule, netenv.Phase{Env: ph.Env})
	}
	write("phases.json", s, "schedule: 1001 phases, over the cap of 1000 (max_phases)")
	s = testSeed(1)
	s.CCAI = slices.Repeat([]string{"reno"}, netenv.MaxFlows+1)
	write("flows.json", s, "flows: 257, over the cap of 256 (max_flows)")
	// A gzip bomb: a few kilobytes that expand past max_trace_bytes.
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	zero := make([]byte, 1<<20)
	for range netenv.MaxLinkTraceBytes>>20 + 1 {
		_, _ = w.Write(zero)
	}
	_ = w.Close()
	s = testSeed(1)
	s.LinkTraces = []*netenv.LinkTraceFile{{Name: "bomb", SHA256: hex.EncodeToString(make([]byte, sha256.Size)), Gzip: z.Bytes()}}
	write("trace-bomb.json", s, "over the cap of 67108864 bytes (max_trace_bytes)")
	// A file over max_seed_bytes, sparse: refused by its size, unread.
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, MaxSeedBytes+1); err != nil {
		t.Fatal(err)
	}
	out[big] = "over the cap of 134217728 bytes (max_seed_bytes)"
	return out
}

// A condition that fails to run is a *ConditionFault naming it; it is not
// evaluated again until Reset, and the others go on being evaluated.
func TestEvaluatorConditionFault(t *testing.T) {
	schema := SchemaFor("reno")
	conds, err := Compile([]ConditionSpec{
		{Name: "bad", When: `cwnd > 1 && (prev.ca_state ?? 0) > 1`},
		{Name: "big", When: `cwnd > 10`},
	}, schema)
	if err != nil {
		t.Fatal(err)
	}
	e := NewEvaluator(schema, conds)
	cur := make([]float64, len(schema))
	cur[schema.Index("cwnd")] = 20
	for rec := range 3 {
		hits, err := e.Eval(cur, cur, nil)
		if !slices.Equal(hits, []int{1}) {
			t.Fatalf("record %d: hits %v, want [1] (big)", rec, hits)
		}
		cf, ok := AsConditionFault(err)
		switch {
		case rec == 0 && (!ok || cf.Spec.Name != "bad" || !strings.Contains(err.Error(), `condition "bad"`)):
			t.Fatalf("record 0: error %v, want bad's fault", err)
		case rec > 0 && err != nil:
			t.Fatalf("record %d: error %v: a faulty condition is evaluated once a simulation", rec, err)
		}
		cur[schema.Index("cwnd")]++
	}
	e.Reset()
	if _, err := e.Eval(cur, cur, nil); err == nil {
		t.Fatal("after Reset, bad is not evaluated again")
	}
	f := (&ConditionFault{Spec: conds[0].ConditionSpec, Flow: 1, At: 5, Err: errors.New("x")}).Finding()
	if f.Kind != FaultCondition || f.Condition != "bad" || f.When != conds[0].When || f.Flow != 1 || f.TimeNS != 5 {
		t.Fatalf("finding %+v", f)
	}
}

// A replay of a condition that faults is not reproduced (exit 1, not an
// internal error); a condition-fault seed reproduces when it faults again.
func TestReplayConditionFault(t *testing.T) {
	s := testSeed(3)
	s.Finding = &Finding{Condition: "bad", When: `cwnd > 12 && (prev.ca_state ?? 0) > 1`, Kind: "condition"}
	r, err := Replay(context.Background(), s, nil)
	if err != nil || r.Reproduced || len(r.Diff) == 0 || !strings.Contains(r.Diff[0], `condition "bad" faulted`) {
		t.Fatalf("%+v, %v", r, err)
	}
	s.Finding.Kind = FaultCondition
	r, err = Replay(context.Background(), s, nil)
	if err != nil || r.Reproduced || r.HitTimeNS <= 0 {
		t.Fatalf("%+v, %v: want the fault's time, and a time_ns that differs", r, err)
	}
	s.Finding.TimeNS = r.HitTimeNS
	if r, err = Replay(context.Background(), s, nil); err != nil || !r.Reproduced {
		t.Fatalf("%+v, %v", r, err)
	}
}

// Names: printable, bounded, clear of the fault directories, and two names
// collide when they share a directory, on any file system.
func TestCheckName(t *testing.T) {
	for _, tc := range []struct{ name, err string }{
		{"huge-cwnd", ""},
		{"ça déborde", ""},
		{strings.Repeat("é", MaxNameLen), ""},
		{"", "name: empty"},
		{strings.Repeat("a", MaxNameLen+1), "129 characters"},
		{"a\x1b[2Jb", "(U+001B) is not printable"},
		{"a\u200bb", "(U+200B) is not printable"},
		{"tab\tname", "not printable"},
		{"\xff", "not valid UTF-8"},
		{"Fault-Hang", "directories of fault findings"},
		{"fault.oom", ""}, // findings/fault_oom/, not fault-oom/
	} {
		err := CheckName(tc.name)
		if (tc.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%.40q: %v, want %q", tc.name, err, tc.err)
		}
	}
	for _, same := range [][]string{{"a.b", "a/b", "a b", "A_B"}, {"../x", "__/x", "___x"}} {
		for _, n := range same[1:] {
			if FileKey(n) != FileKey(same[0]) {
				t.Errorf("%q and %q share a directory, keys %q and %q", same[0], n, FileKey(same[0]), FileKey(n))
			}
		}
	}
	if FileName("../../etc") != "______etc" {
		t.Errorf("FileName climbs: %q", FileName("../../etc"))
	}
}

// WriteArtifacts never writes over another finding: only over the same
// finding of the same configuration (a resumed campaign's).
func TestWriteArtifactsNeverOverwrites(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big", "act-0000001.json")
	s := testSeed(3)
	s.Finding = &Finding{Condition: "big", When: "cwnd > 12", Kind: "condition"}
	r, err := Replay(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Finding.TimeNS, s.Finding.State = r.HitTimeNS, r.HitState
	ctx := context.Background()
	if err := WriteArtifacts(ctx, netenv.Native{}, s, path); err != nil {
		t.Fatal(err)
	}
	again := *s
	again.Program = "actfuzz (another build)"
	if err := WriteArtifacts(ctx, netenv.Native{}, &again, path); err != nil {
		t.Fatalf("the same finding again: %v", err)
	}
	other := testSeed(4)
	other.Finding = &Finding{Condition: "big", When: "cwnd > 12", Kind: "condition", TimeNS: s.Finding.TimeNS}
	err = WriteArtifacts(ctx, netenv.Native{}, other, path)
	if !errors.Is(err, ErrOtherSeed) || !strings.Contains(err.Error(), path) {
		t.Fatalf("another finding over it: %v", err)
	}
	if got, err := ReadSeed(path); err != nil || got.Seed != 3 {
		t.Fatalf("the file now holds %+v, %v", got, err)
	}
}
