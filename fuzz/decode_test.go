package fuzz

import (
	"bytes"
	"math"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// checkInside fails unless g is a valid schedule whose every parameter is a
// grid point of c's ranges.
func checkInside(t testing.TB, c *act.Campaign, g act.Config) {
	t.Helper()
	if err := g.Schedule.Validate(); err != nil {
		t.Fatalf("decoded schedule is invalid: %v\n%+v", err, g.Schedule)
	}
	if n := len(g.Schedule); n < 1 || n > MaxPhases {
		t.Fatalf("%d phases", n)
	}
	var last time.Duration
	for i, ph := range g.Schedule {
		for j, r := range c.Params {
			v, lo, hi := ph.Env.Get(j), r.Min, r.Max
			if j == 6 { // the buffer is rounded to whole packets
				lo, hi = math.Round(lo), math.Round(hi)
			}
			if v < lo || v > hi {
				t.Fatalf("phase %d: %s = %v outside [%v, %v]", i, netenv.ParamNames()[j], v, r.Min, r.Max)
			}
		}
		if i < len(g.Schedule)-1 {
			if ph.Until <= last || ph.Until-last > MaxGap {
				t.Fatalf("phase %d: switch at %v after %v", i, ph.Until, last)
			}
			last = ph.Until
		} else if ph.Until != 0 {
			t.Fatalf("last phase has until %v", ph.Until)
		}
	}
}

func testCampaigns(t testing.TB) []*act.Campaign {
	t.Helper()
	odd, err := act.ParseCampaign("odd.yaml", []byte(`
ccai: [reno, cubic]
params:
  loss: {min: 0.5, max: 1, step: 0.3}
  bw: {min: 0.001, max: 1000000, step: 1e-300}
  qshape: {min: 0, max: 1000000, step: 7}
  qscale: {min: 0, max: 1000000, step: 0.5}
  buffer: {min: 1, max: 1, step: 1}
  app: {min: 5, max: 5, step: 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	return []*act.Campaign{act.DefaultCampaign(), odd}
}

func TestDecodeAnyBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range testCampaigns(t) {
		inputs := [][]byte{nil, {}, {0xff}, bytes.Repeat([]byte{0xff}, MaxInputLen), bytes.Repeat([]byte{0x80}, 3*MaxInputLen)}
		for i := 0; i < 2000; i++ {
			b := make([]byte, rng.IntN(MaxInputLen+40))
			for k := range b {
				b[k] = byte(rng.Uint32())
			}
			inputs = append(inputs, b)
		}
		phases := map[int]int{}
		for _, b := range inputs {
			g := Decode(c, b)
			checkInside(t, c, g)
			phases[len(g.Schedule)]++
			// The canonical encoding decodes to the same configuration.
			if g2 := Decode(c, Encode(c, g)); !reflect.DeepEqual(g, g2) {
				t.Fatalf("Decode∘Encode changed a decoded config:\n%+v\n%+v", g, g2)
			}
		}
		for n := 1; n <= MaxPhases; n++ {
			if phases[n] < 300 {
				t.Errorf("%d phases in only %d of %d random inputs", n, phases[n], len(inputs))
			}
		}
	}
}

func TestDecodeZeroAndShort(t *testing.T) {
	c := act.DefaultCampaign()
	g := Decode(c, nil)
	if g.Seed != 0 || len(g.Schedule) != 1 {
		t.Fatalf("%+v", g)
	}
	e := g.Schedule[0].Env
	if e.Loss != 0 || e.BW != 0.1 || e.Delay != 1 || e.Buffer != 2 {
		t.Fatalf("zero input should decode to every minimum: %+v", e)
	}
	// A partial word is zero-padded: 0x01 is seed 1.
	if g := Decode(c, []byte{1}); g.Seed != 1 {
		t.Fatalf("seed %d", g.Seed)
	}
}

// Configurations on the grid, as ACT's selector draws them, round-trip
// exactly, including concatenation's arbitrary switch times.
func TestEncodeRoundTrip(t *testing.T) {
	c := act.DefaultCampaign()
	rng := rand.New(rand.NewPCG(3, 4))
	gridPoint := func(r act.Range) float64 { // act's Range.grid of a uniform draw
		n := math.Floor((r.Max-r.Min)/r.Step + 1e-9)
		g := math.Round(rng.Float64() * n)
		return r.Min + g*r.Step
	}
	for i := 0; i < 3000; i++ {
		n := 1 + rng.IntN(MaxPhases)
		g := act.Config{Seed: rng.Uint64()}
		var t0 time.Duration
		for p := 0; p < n; p++ {
			var e netenv.Env
			for j, r := range c.Params {
				e.Set(j, gridPoint(r))
			}
			ph := netenv.Phase{Env: e}
			if p < n-1 {
				switch rng.IntN(3) {
				case 0:
					t0 += 1 + time.Duration(rng.Int64N(int64(MaxGap)))
				case 1:
					t0 += time.Duration(rng.Int64N(int64(time.Second))) + 1
				default:
					t0 += time.Duration(1 + rng.IntN(4))
				}
				ph.Until = t0
			}
			g.Schedule = append(g.Schedule, ph)
		}
		if e := g.Schedule[0].Env; e.QShape*e.QScale > netenv.MaxQMean {
			continue
		}
		if got := Decode(c, Encode(c, g)); !reflect.DeepEqual(got, g) {
			t.Fatalf("round trip:\n%+v\n%+v", g, got)
		}
	}
	for _, d := range []time.Duration{1, 2, 3, 1 << 20, 1<<20 + 1, MaxGap - 1, MaxGap} {
		if got := decodeGap(encodeGap(d)); got != d {
			t.Fatalf("gap %d → %d", d, got)
		}
	}
}

// A longer schedule keeps its first MaxPhases phases; the last kept phase
// then runs to the end.
func TestEncodeTruncates(t *testing.T) {
	c := act.DefaultCampaign()
	e := netenv.DefaultEnv()
	var s netenv.Schedule
	for i := 1; i <= 6; i++ {
		e.Delay = float64(i)
		s = append(s, netenv.Phase{Env: e, Until: time.Duration(i) * time.Second})
	}
	s[5].Until = 0
	g := Decode(c, Encode(c, act.Config{Seed: 5, Schedule: s}))
	if len(g.Schedule) != MaxPhases || g.Schedule[3].Env.Delay != 4 || g.Schedule[2].Until != 3*time.Second || g.Schedule[3].Until != 0 {
		t.Fatalf("%+v", g.Schedule)
	}
}

func TestSeedInputs(t *testing.T) {
	c := act.DefaultCampaign()
	dir := t.TempDir()
	want := Decode(c, randomInput(rand.New(rand.NewPCG(7, 7))))
	s := &corpus.Seed{Version: corpus.SeedVersion, Program: corpus.ProgramVersion(), Subject: "native", CCAI: []string{"cubic"},
		Profile: "linux", Topology: netenv.TopoSingleLink, Bytes: 100000, SACK: true, Seed: want.Seed, Schedule: want.Schedule}
	if err := s.Write(filepath.Join(dir, "findings", "x", "a.json")); err != nil {
		t.Fatal(err)
	}
	if err := corpus.WriteFileAtomic(filepath.Join(dir, "findings", "x", "bad.json"), []byte("{")); err != nil {
		t.Fatal(err)
	}
	in, skipped, err := SeedInputs(c, dir)
	if err != nil || skipped != 1 || len(in) != 1 {
		t.Fatalf("inputs %d, skipped %d, err %v", len(in), skipped, err)
	}
	if got := Decode(c, in[0]); !reflect.DeepEqual(got, want) {
		t.Fatalf("seed file → bytes → G changed G:\n%+v\n%+v", want, got)
	}
	n, err := WriteNativeCorpus(filepath.Join(dir, "native"), in)
	if err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if n, _ := WriteNativeCorpus(filepath.Join(dir, "native"), in); n != 0 {
		t.Fatal("rewrote an existing corpus file")
	}
}
