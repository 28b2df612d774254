package fuzz

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// fuzzing reports whether this test binary is fuzzing (go test -fuzz) rather
// than running the seed corpus.
func fuzzing() bool {
	f := flag.Lookup("test.fuzzcachedir")
	return f != nil && f.Value.String() != ""
}

// regionStorePath is where FuzzRegions persists its regions: ACTFUZZ_REGIONS
// if set; when fuzzing, beside the target's corpus in the fuzz cache
// ($GOCACHE/fuzz/<module>/fuzz/FuzzRegions.regions.bin); otherwise nowhere
// (plain `go test` leaves no files behind).
func regionStorePath(name string) string {
	if p := os.Getenv("ACTFUZZ_REGIONS"); p != "" {
		return p
	}
	if fuzzing() {
		return filepath.Join(flag.Lookup("test.fuzzcachedir").Value.String(), name+".regions.bin")
	}
	return ""
}

// FuzzRegions is the native counterpart of the go-fuzz harness: any input
// decodes to a configuration G of the campaign (CampaignFromEnv), runs, and
// its states go into a region store persisted beside the fuzz cache corpus.
// A condition hit or a subject fault fails the input (the crasher
// equivalent: `go test` saves it under testdata/fuzz/FuzzRegions).
//
// `go test -fuzz` grows its corpus by code coverage only and offers no hook
// to feed region novelty back into it; what this target shares with the
// go-fuzz harness is the region bookkeeping (Store of every run, persisted
// and merged across worker processes), the decoder and the crash
// semantics. For a fuzzer steered by regions, see Run with FeedbackRegions.
func FuzzRegions(f *testing.F) {
	c, err := CampaignFromEnv()
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range DefaultInputs(c) {
		f.Add(s)
	}
	run, err := NewRunner(c, nil)
	if err != nil {
		f.Fatal(err)
	}
	run.Limits = HarnessLimits
	regions, err := OpenRegionStore(regionStorePath("FuzzRegions"), c.Space, c.Seed)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() {
		if err := regions.Flush(); err != nil {
			f.Error(err)
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := Decode(c, data)
		out := run.Run(context.Background(), g)
		if out.Err != nil {
			t.Fatalf("decoded configuration rejected: %v", out.Err)
		}
		m := regions.Add(run.Batch())
		if err := regions.Save(); err != nil {
			t.Logf("saving regions: %v", err)
		}
		if out.Finding() {
			_ = regions.Flush()
			t.Fatal(findingMessage(&out, g))
		}
		if regions.New(m) {
			t.Logf("new regions %v; %d regions at k=%d", m, regions.Regions(regions.K), regions.K)
		}
	})
}

// campaignSeeds are the campaign files of the repository and some broken
// ones.
func campaignSeeds(f *testing.F) [][]byte {
	seeds := [][]byte{
		[]byte(""),
		[]byte("ccai: cubic\n"),
		[]byte("ccai: [reno, cubic]\ntopology: dumbbell\nbytes: 1000\nparams:\n  bw: {min: 1, max: 1, step: 1}\n"),
		[]byte("ccai: [cubic]\nstate:\n  cwnd: {min: 1, max: 64, step: 1}\n  ca_state: {values: [open, loss]}\nkappa: 8\n"),
		[]byte("ccai: [cubic]\nconditions:\n  - {name: c, when: 'prev.ca_state == \"recovery\" && cwnd > prior_cwnd'}\n"),
		[]byte("ccai: [cubic]\nparams:\n  loss: {min: 1, max: 0, step: 0}\n"),
		[]byte("ccai: {a: b}\nkappa: -1\ndelta: .nan\n"),
		[]byte("&a [*a]"),
		[]byte("ccai: [cubic]\nparams:\n  qshape: {min: 0, max: 1e300, step: 1e-300}\n"),
	}
	for _, p := range []string{"../act/default.yaml", "../examples/make-run.yaml", "../examples/undo-increase.yaml",
		"../examples/huge-cwnd.yaml", "../examples/cubic-aggressive.yaml"} {
		if b, err := os.ReadFile(p); err == nil {
			seeds = append(seeds, b)
		}
	}
	return seeds
}

// withDeadline runs fn and fails t if it takes longer than d (a hang).
func withDeadline(t *testing.T, d time.Duration, what string, fn func()) {
	t.Helper()
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		fn()
	}()
	select {
	case p := <-done:
		if p != nil {
			t.Fatalf("%s panicked: %v", what, p)
		}
	case <-time.After(d):
		t.Fatalf("%s did not return within %v", what, d)
	}
}

// FuzzCampaignParser: act.ParseCampaign never panics or hangs, and what it
// accepts is usable: a runner can be built and every decoded configuration
// is valid.
func FuzzCampaignParser(f *testing.F) {
	for _, s := range campaignSeeds(f) {
		f.Add(s, []byte{1, 2, 3})
	}
	f.Fuzz(func(t *testing.T, src, input []byte) {
		var c *act.Campaign
		var err error
		withDeadline(t, 10*time.Second, "ParseCampaign", func() { c, err = act.ParseCampaign("fuzz.yaml", src) })
		if err != nil {
			if c != nil {
				t.Fatalf("error %v with a campaign", err)
			}
			return
		}
		if len(c.CCAI) == 0 || c.Bytes == 0 {
			t.Fatalf("accepted campaign without flows: %+v", c)
		}
		for i, r := range c.Params {
			if !r.Categorical() && (!(r.Step > 0) || !(r.Min <= r.Max)) {
				t.Fatalf("accepted parameter %s range %+v", netenv.ParamNames()[i], r)
			}
		}
		if _, err := NewRunner(c, nil); err != nil {
			t.Fatalf("accepted campaign cannot run: %v", err)
		}
		if err := Decode(c, input).Schedule.Validate(); err != nil {
			t.Fatalf("accepted campaign decodes to an invalid schedule: %v", err)
		}
	})
}

func validSeedJSON(s *corpus.Seed) []byte {
	b, _ := json.MarshalIndent(s, "", "  ")
	return b
}

// FuzzSeedDecoder: reading a seed file never panics, and a seed it accepts
// converts to a valid configuration that runs (under small caps) without a
// subject fault, and encodes to a fuzzer input.
func FuzzSeedDecoder(f *testing.F) {
	env := netenv.DefaultEnv()
	base := &corpus.Seed{Version: corpus.SeedVersion, Program: corpus.ProgramVersion(), Subject: "native", CCAI: []string{"cubic"},
		Profile: "linux", Topology: netenv.TopoSingleLink, Bytes: 100_000, SACK: true, Seed: 3,
		Schedule: netenv.Schedule{{Env: env, Until: time.Second}, {Env: env}}}
	f.Add(validSeedJSON(base))
	finding := *base
	finding.Finding = &corpus.Finding{Condition: "c", When: "cwnd > 5", Kind: "condition", TimeNS: 5, State: map[string]any{"cwnd": 9.0}}
	f.Add(validSeedJSON(&finding))
	f.Add([]byte(`{"version":1,"ccai":["reno"],"bytes":1,"profile":"linux-3.10","schedule":[{"env":{"loss":1,"bw":0.001,"delay":0,"app":1e-9,"buffer":1}}]}`))
	f.Add([]byte(`{"version":1,"ccai":["cubic"],"bytes":1,"schedule":[]}`))
	f.Add([]byte(`{"version":2}`))
	f.Add([]byte(`{"schedule":[{"until_ns":-1}], "extra": 1}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"version":1,"ccai":["cubic"],"bytes":18446744073709551615,"schedule":[{"env":{"bw":1e6,"delay":1e6,"qshape":1e3,"qscale":1e3,"app":1e7,"buffer":16777216}}]}`))
	f.Add([]byte(`{"version":2,"program":"x","subject":"native","witness":{"scenario":{"name":"w","end_s":1.2,"topology":{"nodes":2,"links":[{"a":0,"b":1,"bw":1,"delay":2}],"cbr":[{"src":0,"dst":1,"packet_bytes":100,"rate":0.1,"start_s":0,"stop_s":1}]},"window":{"last":1,"lo_ms":1,"hi_ms":4}},"delays_ms":[2],"branch":0,"reductions":"SCI","why":["outcome 0"],"outcome":"flow0.received=124","metrics":[],"trace_sha256":""}}`))
	c := act.DefaultCampaign()
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		var s *corpus.Seed
		var err error
		withDeadline(t, 10*time.Second, "ReadSeed", func() { s, err = corpus.ReadSeed(path) })
		if err != nil {
			return
		}
		if s.Witness != nil {
			// A symbolic witness: what ReadSeed accepted must replay
			// without a panic (the scenario is validated; its run is
			// bounded by the default event cap).
			withDeadline(t, 20*time.Second, "ReplayWitness", func() { _, err = corpus.ReplayWitness(context.Background(), s, nil) })
			if err != nil {
				t.Fatalf("accepted witness seed does not replay: %v", err)
			}
			return
		}
		cfg, err := s.Config()
		if err != nil {
			t.Fatalf("ReadSeed accepted a seed whose Config fails: %v", err)
		}
		cfg.Limits = sim.Limits{MaxEvents: 20_000, MaxTime: time.Minute}
		var res netenv.Result
		withDeadline(t, 20*time.Second, "netenv.Run", func() { res, err = netenv.Run(context.Background(), cfg, nil) })
		var fault *netenv.Fault
		if errors.As(err, &fault) {
			t.Fatalf("accepted seed crashes the simulator: %v\n%s", fault, fault.Stack)
		} else if err != nil {
			t.Fatalf("accepted seed does not run: %v", err)
		}
		checkCaps(t, cfg.Limits, res)
		if err := Decode(c, Encode(c, act.Config{Seed: s.Seed, Schedule: s.Schedule})).Schedule.Validate(); err != nil {
			t.Fatalf("encoded seed decodes to an invalid schedule: %v", err)
		}
	})
}

func checkCaps(t *testing.T, lim sim.Limits, res netenv.Result) {
	t.Helper()
	if lim.MaxEvents > 0 && res.Events > lim.MaxEvents {
		t.Fatalf("%d events, cap %d", res.Events, lim.MaxEvents)
	}
	if lim.MaxTime > 0 && res.SimTime > lim.MaxTime {
		t.Fatalf("simulated %v, cap %v", res.SimTime, lim.MaxTime)
	}
	if res.Capped != (res.CapReason != "") {
		t.Fatalf("capped %v with reason %q", res.Capped, res.CapReason)
	}
}

// extremeValue maps a word to a value of [lo, hi]: mostly the ends and
// their neighbourhoods, else log-uniform or uniform.
func extremeValue(w uint64, lo, hi float64) float64 {
	u := float64(w>>11) / (1 << 53)
	var v float64
	switch w & 7 {
	case 0:
		v = lo
	case 1:
		v = hi
	case 2:
		v = lo + (hi-lo)*u*1e-6
	case 3:
		v = hi - (hi-lo)*u*1e-6
	case 4, 5:
		l := math.Max(lo, 1e-9)
		v = math.Exp(math.Log(l) + u*(math.Log(hi)-math.Log(l)))
	default:
		v = lo + (hi-lo)*u
	}
	return math.Min(math.Max(v, lo), hi)
}

// extremeConfig decodes data into a valid configuration anywhere in what
// netenv accepts (not a campaign's P): every registered CCAI, 1–3 flows,
// every topology and profile, tiny to large transfers, and parameters at
// and near netenv's limits, with small caps.
func extremeConfig(data []byte) netenv.Config {
	w := words{data: data}
	names := slices.Sorted(slices.Values(ccai.Names()))
	cfg := netenv.Config{Seed: w.next(), Limits: sim.Limits{MaxEvents: 30_000, MaxTime: 2 * time.Minute}}
	ctl := w.next()
	topos := []string{netenv.TopoSingleLink, netenv.TopoDumbbell, netenv.TopoParkingLot}
	cfg.Topology = topos[ctl%3]
	cfg.SACK = ctl>>2&1 == 1
	cfg.Profile = ccai.Profile(ctl >> 3 % uint64(len(ccai.ProfileNames)))
	nflows := 1 + int(ctl>>8%3)
	for i := 0; i < nflows; i++ {
		fw := w.next()
		cfg.Flows = append(cfg.Flows, netenv.Flow{CCA: names[fw%uint64(len(names))],
			Bytes: uint64(extremeValue(fw>>8, 1, 5e6))})
	}
	nph := 1 + int(ctl>>16%4)
	var t time.Duration
	for i := 0; i < nph; i++ {
		var e netenv.Env
		e.Loss = extremeValue(w.next(), 0, 1)
		e.BW = extremeValue(w.next(), netenv.MinBW, netenv.MaxBW)
		e.Delay = extremeValue(w.next(), 0, netenv.MaxDelay)
		e.QShape = extremeValue(w.next(), 0, 1e3)
		e.QScale = extremeValue(w.next(), 0, netenv.MaxQMean/math.Max(e.QShape, 1))
		for e.QShape*e.QScale > netenv.MaxQMean { // rounding: at most a few ulps
			e.QScale = math.Nextafter(e.QScale, 0)
		}
		e.App = extremeValue(w.next(), 1e-9, netenv.MaxBW*10)
		e.Buffer = int(extremeValue(w.next(), 1, netenv.MaxBuffer))
		ph := netenv.Phase{Env: e}
		if i < nph-1 {
			t += 1 + time.Duration(extremeValue(w.next(), 0, float64(time.Minute)))
			ph.Until = t
		}
		cfg.Schedule = append(cfg.Schedule, ph)
	}
	return cfg
}

// recordChecker checks every state record of an extreme run.
type recordChecker struct {
	maxT   time.Duration
	flows  int
	last   []time.Duration
	failed string
}

func (c *recordChecker) Observe(r *observe.Record) {
	if c.failed != "" {
		return
	}
	switch {
	case int(r.Flow) < 0 || int(r.Flow) >= c.flows:
		c.failed = "record of an unknown flow"
	case r.Time > c.maxT:
		c.failed = "record after the time cap"
	case r.Time < c.last[r.Flow]:
		c.failed = "records went back in time"
	case r.CAState > ccai.StateLoss:
		c.failed = "invalid ca_state"
	case r.SRTT < 0 || r.RTTVar < 0:
		c.failed = "negative srtt or rttvar"
	}
	if int(r.Flow) >= 0 && int(r.Flow) < c.flows {
		c.last[r.Flow] = r.Time
	}
}

// FuzzSimulatorExtremes: netenv.Run under extreme but valid parameters
// does not panic, does not hang, and its caps hold.
func FuzzSimulatorExtremes(f *testing.F) {
	f.Add([]byte{})
	f.Add(make([]byte, 200))
	rng := rand.New(rand.NewPCG(5, 5))
	for i := 0; i < 6; i++ {
		b := make([]byte, 200)
		for k := 0; k+8 <= len(b); k += 8 {
			binary.LittleEndian.PutUint64(b[k:], rng.Uint64())
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg := extremeConfig(data)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("extremeConfig made an invalid configuration: %v", err)
		}
		rc := &recordChecker{maxT: cfg.Limits.MaxTime, flows: len(cfg.Flows), last: make([]time.Duration, len(cfg.Flows))}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		res, err := netenv.Run(ctx, cfg, rc)
		var fault *netenv.Fault
		switch {
		case errors.As(err, &fault):
			t.Fatalf("simulator panicked: %v\n%s", fault, fault.Stack)
		case errors.Is(err, context.DeadlineExceeded):
			t.Fatalf("hang: still running after 20 s of wall time despite caps %+v", cfg.Limits)
		case err != nil:
			t.Fatalf("run failed: %v", err)
		}
		checkCaps(t, cfg.Limits, res)
		if rc.failed != "" {
			t.Fatal(rc.failed)
		}
		if len(res.Flows) != len(cfg.Flows) {
			t.Fatalf("%d flow results for %d flows", len(res.Flows), len(cfg.Flows))
		}
	})
}

// FuzzDecode: every input decodes to a valid configuration inside P, and
// its canonical encoding decodes to the same configuration.
func FuzzDecode(f *testing.F) {
	c := act.DefaultCampaign()
	for _, s := range DefaultInputs(c) {
		f.Add(s)
	}
	f.Add([]byte{})
	f.Add(make([]byte, MaxInputLen))
	f.Fuzz(func(t *testing.T, data []byte) {
		g := Decode(c, data)
		checkInside(t, c, g)
		if g2 := Decode(c, Encode(c, g)); !slices.EqualFunc(g.Schedule, g2.Schedule, func(a, b netenv.Phase) bool { return a == b }) || g.Seed != g2.Seed {
			t.Fatalf("Decode∘Encode changed G:\n%+v\n%+v", g, g2)
		}
	})
}
