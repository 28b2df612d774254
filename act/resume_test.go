package act

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/gob"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

// A campaign killed part-way and resumed ends exactly as an uninterrupted
// one: same regions at every k, same finding groups, same seed files.
func TestResumeAfterCrash(t *testing.T) {
	c := smallCampaign(t)
	const budget = 448
	whole := t.TempDir()
	full, err := Run(context.Background(), c, Options{Budget: budget, Out: whole, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}

	cut := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Run(ctx, c, Options{Budget: budget, Out: cut, Workers: 2, CheckpointEvery: 1,
		Progress: func(st Status) {
			if st.Sims >= 192 {
				cancel() // the "crash": the next batch is dropped mid-flight
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	// The campaign's directory moves before the resume: the findings of
	// its first stretch are found where they now are.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(cut, moved); err != nil {
		t.Fatal(err)
	}
	cut = moved
	onDisk, err := LoadReport(cut, "act")
	if err != nil || len(onDisk.Findings) == 0 {
		t.Fatalf("the checkpoint before the resume: %v, %v (the test needs a finding there)", onDisk, err)
	}
	for _, g := range onDisk.Findings {
		if _, err := os.Stat(g.Path); err != nil {
			t.Fatalf("LoadReport of the moved campaign: %v", err)
		}
	}
	resumed, err := Run(context.Background(), c, Options{Budget: budget, Out: cut, Workers: 1, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range resumed.Findings {
		if !strings.HasPrefix(g.Path, cut+string(filepath.Separator)) {
			t.Fatalf("finding at %s, outside the moved %s", g.Path, cut)
		}
		if _, err := os.Stat(g.Path); err != nil {
			t.Fatal(err)
		}
	}
	if resumed.Sims != full.Sims {
		t.Fatalf("resumed ran %d sims, want %d", resumed.Sims, full.Sims)
	}
	for _, k := range c.Space.Ks() {
		if a, b := full.Store.VisitedRegions(k), resumed.Store.VisitedRegions(k); a != b {
			t.Fatalf("k=%d: %d regions uninterrupted, %d resumed", k, a, b)
		}
	}
	names := func(r *Report) (out []string) {
		for _, g := range r.Findings {
			rel, _ := filepath.Rel(filepath.Dir(filepath.Dir(filepath.Dir(g.Path))), g.Path)
			out = append(out, rel)
		}
		return out
	}
	if a, b := names(full), names(resumed); !slices.Equal(a, b) {
		t.Fatalf("findings differ:\n%v\n%v", a, b)
	}
	for _, g := range full.Findings {
		rel, _ := filepath.Rel(whole, g.Path)
		a, _ := os.ReadFile(g.Path)
		b, err := os.ReadFile(filepath.Join(cut, rel))
		if err != nil || string(a) != string(b) {
			t.Fatalf("seed file %s differs after resume (%v)", rel, err)
		}
	}
	t.Logf("%d sims, %d finding groups, identical after resume", full.Sims, len(full.Findings))
}

// A checkpoint written by a build with another parameter table is refused
// with a message naming both tables; one written before the table was
// recorded reads as the seven parameters of that time.
func TestResumeRefusesOtherParameterTable(t *testing.T) {
	c := smallCampaign(t)
	out := t.TempDir()
	if _, err := Run(context.Background(), c, Options{Budget: 64, Out: out, Workers: 1, CheckpointEvery: 1}); err != nil {
		t.Fatal(err)
	}
	path := checkpointPath(out, "act")
	rewrite := func(params []string) {
		t.Helper()
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		cp, r, err := readCheckpointHeader(f, path)
		if err != nil {
			t.Fatal(err)
		}
		rest, err := io.ReadAll(r)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		cp.Params = params
		var hdr bytes.Buffer
		if err := gob.NewEncoder(&hdr).Encode(cp); err != nil {
			t.Fatal(err)
		}
		b := binary.LittleEndian.AppendUint64([]byte(checkpointMagic), uint64(hdr.Len()))
		b = append(append(b, hdr.Bytes()...), rest...)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(nil) // as v3 wrote it, with its seven parameters
	_, err := Run(context.Background(), c, Options{Budget: 96, Out: out, Workers: 1, Resume: true})
	if same := slices.Equal(v3Params, netenv.ParamNames()); (err == nil) != same {
		t.Fatalf("checkpoint without its parameter list (this table is v3's: %v): %v", same, err)
	}
	rewrite(netenv.ParamNames())
	if _, err := Run(context.Background(), c, Options{Budget: 96, Out: out, Workers: 1, Resume: true}); err != nil {
		t.Fatalf("checkpoint of this table: %v", err)
	}
	rewrite(append(netenv.ParamNames(), "ecn"))
	_, err = Run(context.Background(), c, Options{Budget: 128, Out: out, Workers: 1, Resume: true})
	if err == nil || !strings.Contains(err.Error(), "ecn") || !strings.Contains(err.Error(), "parameters of P") {
		t.Fatalf("checkpoint of another table: %v", err)
	}
}
