package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/internal/race"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestMain makes the test binary its own worker process ("worker", as
// `actfuzz worker` started by a supervisor) and its own worker host
// ("host URL PROCS", as `actfuzz worker --nats URL --procs N`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "worker":
			os.Exit(act.WorkerMain(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr,
				func(string) (netenv.Subject, error) {
					if s := os.Getenv(crashSeedEnv); s != "" {
						seed, err := strconv.ParseUint(s, 10, 64)
						return crashOn{seed: seed}, err
					}
					return netenv.Native{}, nil
				}))
		case "host":
			os.Exit(hostMain(os.Args[2:]))
		case "coordinator":
			os.Exit(coordinatorMain(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// crashSeedEnv, in a worker process's environment, makes it die on the
// configurations of that seed (crashOn).
const crashSeedEnv = "ACTFUZZ_TEST_CRASH_SEED"

// crashOn is the native subject, except that the worker process exits (a
// crash, as a signal would be) when it comes to a configuration of seed.
type crashOn struct {
	netenv.Native
	seed uint64
}

func (c crashOn) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	if cfg.Seed == c.seed {
		fmt.Fprintf(os.Stderr, "crashOn: seed %d\n", c.seed)
		os.Exit(1)
	}
	return c.Native.Run(ctx, cfg, obs)
}

func hostMain(args []string) int {
	procs, _ := strconv.Atoi(args[1])
	nc, err := Connect(ConnectOptions{URL: args[0], Name: "test host"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer nc.Close()
	w, err := NewWorker(nc, WorkerOptions{Procs: procs, Poll: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := w.Serve(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

// coordinatorMain is "coordinator URL OUT [ID LEASE]": testCampaign
// through a cluster, checkpointed after every batch (to be killed or
// stopped), as campaign ID (default "killed") with that lease, logging
// to stderr.
func coordinatorMain(args []string) int {
	nc, err := Connect(ConnectOptions{URL: args[0], Name: "test coordinator"})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	opt := Options{ID: "killed"}
	if len(args) == 4 {
		opt.ID = args[2]
		if opt.Lease, err = time.ParseDuration(args[3]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		opt.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	c := testCampaign(nil)
	_, err = act.Run(context.Background(), c, act.Options{Budget: testBudget, Lag: testLag, Out: args[1], CheckpointEvery: 1,
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			return NewExecutor(ctx, nc, c, h, opt)
		}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	return 0
}

// startServer starts an embedded NATS server with JetStream storing in
// dir, on port (-1: any).
func startServer(t testing.TB, dir string, port int) *server.Server {
	t.Helper()
	return startServerWith(t, &server.Options{Host: "127.0.0.1", Port: port, JetStream: true, StoreDir: dir,
		NoLog: true, NoSigs: true, MaxPayload: 8 << 20})
}

// restartable is an embedded JetStream server that restart starts again
// on the same port and store.
type restartable struct {
	t    testing.TB
	dir  string
	port int
	s    *server.Server
}

// startRestartable starts a restartable server; a -short run skips the
// test.
func startRestartable(t *testing.T) *restartable {
	if testing.Short() {
		t.Skip("restarts a NATS server")
	}
	dir := t.TempDir()
	s := startServer(t, dir, -1)
	return &restartable{t: t, dir: dir, port: s.Addr().(*net.TCPAddr).Port, s: s}
}

// stop shuts the server down.
func (r *restartable) stop() {
	r.s.Shutdown()
	r.s.WaitForShutdown()
}

// restart stops the server and starts it again after down.
func (r *restartable) restart(down time.Duration) {
	r.stop()
	time.Sleep(down)
	r.s = startServer(r.t, r.dir, r.port)
}

// startServerWith starts an embedded NATS server with opts.
func startServerWith(t testing.TB, opts *server.Options) *server.Server {
	t.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats server not ready")
	}
	t.Cleanup(s.Shutdown)
	return s
}

func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := Connect(ConnectOptions{URL: url, Name: t.Name()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// testCampaign is the cluster tests' campaign. It runs without the
// oracles: the cluster carries their hits like any condition's (act's
// tests check the oracles), and under the race detector their cost per
// simulation took this package past go test's 10 minutes.
func testCampaign(t *testing.T) *act.Campaign {
	if t != nil {
		t.Helper()
	}
	c, err := act.ParseCampaign("c.yaml", []byte(`
ccai: [reno]
profile: linux-3.10
bytes: 300000
params:
  bw: {min: 0.5, max: 50, step: 0.1}
  delay: {min: 1, max: 200, step: 1}
conditions:
  - {name: undo-increase, when: 'prev.ca_state == "recovery" && ca_state == "open" && cwnd > prior_cwnd'}
window: 64
oracles: none
`))
	if err != nil {
		panic(err)
	}
	return c
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// outcome is what must not depend on where simulations ran: the regions
// at every k and the finding groups.
func outcome(rep *act.Report) string {
	var b strings.Builder
	for _, k := range rep.Store.Space().Ks() {
		fmt.Fprintf(&b, "k=%d:%d ", k, rep.Store.VisitedRegions(k))
	}
	for _, g := range rep.Findings {
		f := g.Seed.Finding
		fmt.Fprintf(&b, "\n%s %s %s seed=%d ×%d t=%d", f.Kind, f.Condition, filepath.Base(g.Path), g.Seed.Seed, g.Count, f.TimeNS)
	}
	return b.String()
}

// sameSeeds fails unless the seed files of two runs are byte-identical.
// sameAsLocal fails the test unless the cluster's run rep (what: how it
// ran) ends as the local reference ref: the same outcome (regions at every
// k, findings) and byte-identical seed files.
func sameAsLocal(t *testing.T, what string, ref, rep *act.Report, refDir, dir string) {
	t.Helper()
	if a, b := outcome(ref), outcome(rep); a != b {
		t.Fatalf("local:\n%s\n%s:\n%s", a, what, b)
	}
	sameSeeds(t, ref, rep, refDir, dir)
}

func sameSeeds(t *testing.T, a, b *act.Report, dirA, dirB string) {
	t.Helper()
	sameSeedsBut(t, a, b, dirA, dirB, "")
}

// sameSeedsBut is sameSeeds, except for a's seed file skip (which b must
// have too).
func sameSeedsBut(t *testing.T, a, b *act.Report, dirA, dirB, skip string) {
	t.Helper()
	if len(a.Findings) != len(b.Findings) {
		t.Fatalf("%d finding groups, want %d", len(b.Findings), len(a.Findings))
	}
	for _, g := range a.Findings {
		rel, _ := filepath.Rel(dirA, g.Path)
		x, err := os.ReadFile(g.Path)
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(dirB, rel))
		if g.Path == skip && err == nil {
			continue
		}
		if err != nil || string(x) != string(y) {
			t.Fatalf("seed file %s differs (%v)", rel, err)
		}
	}
}

const (
	testBudget = 448
	testLag    = 4
)

// reference runs the campaign on one local in-process worker.
func reference(t *testing.T, c *act.Campaign) (*act.Report, string) {
	t.Helper()
	return referenceOf(t, c, testBudget)
}

// referenceOf is reference for budget simulations.
func referenceOf(t *testing.T, c *act.Campaign, budget int) (*act.Report, string) {
	t.Helper()
	dir := t.TempDir()
	rep, err := act.Run(context.Background(), c, act.Options{Budget: budget, Workers: 1, Lag: testLag, Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) == 0 {
		t.Fatal("the reference found nothing: the test wants findings to compare")
	}
	return rep, dir
}

// clusterRun runs the campaign through a cluster executor on nc;
// after, if set, is called with the executor once it is set up.
func clusterRun(t *testing.T, ctx context.Context, c *act.Campaign, nc *nats.Conn, out string, co Options, after func(*Executor, act.CampaignHeader), opt act.Options) (*act.Report, *Executor) {
	t.Helper()
	var ex *Executor
	co.Logger = testLogger(t)
	opt.Budget, opt.Lag, opt.Out = testBudget, testLag, out
	opt.Executor = func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
		var err error
		ex, err = NewExecutor(ctx, nc, c, h, co)
		if err == nil && after != nil {
			after(ex, h)
		}
		return ex, err
	}
	rep, err := act.Run(ctx, c, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep, ex
}

// startHosts starts n worker hosts of procs processes each, in this
// process; they stop at the end of the test. setup, if any, is called with
// each before it serves.
func startHosts(t *testing.T, url string, n, procs int, program string, setup ...func(*Worker)) []*Worker {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	var ws []*Worker
	for range n {
		w, err := NewWorker(connect(t, url), WorkerOptions{Procs: procs, Poll: 100 * time.Millisecond, Program: program, Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range setup {
			f(w)
		}
		ws = append(ws, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.Serve(ctx); err != nil {
				t.Errorf("worker host: %v", err)
			}
		}()
	}
	return ws
}

// A campaign on an embedded JetStream server with three worker hosts
// gives what one local worker gives: the same regions at every k, the
// same findings and byte-identical seed files.
func TestClusterMatchesLocal(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	hosts := startHosts(t, s.ClientURL(), 3, 1, "")
	dir := t.TempDir()
	start := time.Now()
	rep, ex := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "determinism"}, nil, act.Options{})
	t.Logf("cluster: %d sims in %v; %+v", rep.Sims, time.Since(start).Round(time.Millisecond), ex.Stats())
	sameAsLocal(t, "cluster", ref, rep, refDir, dir)
	served := 0
	for _, h := range hosts {
		if h.Stats().Chunks > 0 {
			served++
		}
	}
	if st := ex.Stats(); st.Results != testBudget || st.RejectedTotal() != 0 || served < 2 {
		t.Fatalf("%+v, %d hosts served", st, served)
	}
	// A finished campaign leaves no stream behind.
	for name := range ex.js.StreamNames(context.Background()).Name() {
		if strings.HasPrefix(name, "ACTFUZZ_") {
			t.Errorf("stream %s left after the campaign", name)
		}
	}
}

// Hostile messages on the campaign's subjects are rejected and counted,
// never merged: the campaign ends as the reference does.
func TestHostilePublisher(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	hosts := startHosts(t, s.ClientURL(), 1, 2, "")
	hostile := connect(t, s.ClientURL())
	const id = "hostile"
	pub := func(subject, campaign, work string, data []byte) {
		m := &nats.Msg{Subject: subject, Header: nats.Header{}, Data: data}
		if campaign != "" {
			m.Header.Set(hdrCampaign, campaign)
		}
		if work != "" {
			m.Header.Set(hdrWork, work)
		}
		if err := hostile.PublishMsg(m); err != nil {
			t.Fatal(err)
		}
	}
	result := func(r act.Result) []byte {
		b, err := act.EncodeMessage(r)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	work := func(w act.Work) []byte {
		b, err := act.EncodeMessage(w)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	wantCoord := map[string]int{"malformed": 2, "another campaign": 1, "unknown batch": 1,
		"configuration does not match its batch": 1, "index outside its batch": 1, "not a result": 1,
		"states outside the campaign's space": 1}
	wantHost := map[string]int{"malformed": 1, "another campaign header": 1, "batch id does not match its configurations": 1, "another campaign": 1,
		"chunk size": 1}
	after := func(ex *Executor, h act.CampaignHeader) {
		rs, ws := resultSubject(id), workSubject(id, ex.epoch)
		pub(rs, id, "", []byte("garbage"))
		pub(rs, id, "", []byte{'R', 0xff, 0xff})
		// Over MaxResult: the stream itself refuses it.
		js, err := jetstream.New(hostile)
		if err != nil {
			t.Error(err)
			return
		}
		if _, err := js.Publish(context.Background(), rs, make([]byte, 2<<20)); err == nil {
			t.Error("the results stream took a message over MaxResult")
		}
		pub(rs, "someone-else", "", result(act.Result{BatchID: 0, Index: 0}))
		pub(rs, id, "x", result(act.Result{BatchID: 1 << 40, Index: 1 << 40, States: []byte{1}}))
		pub(rs, id, strings.Repeat("0", 64), result(act.Result{BatchID: 0, Index: 0, States: []byte{1}}))
		pub(rs, id, "", work(act.Work{BatchID: 0}))
		// The chunk's true sum, a forged index and forged states.
		ex.mu.Lock()
		sum0 := ""
		if c0 := ex.chunks[0]; c0 != nil {
			sum0 = c0.sum
		}
		ex.mu.Unlock()
		pub(rs, id, sum0, result(act.Result{BatchID: 0, Index: 9, States: []byte{1}}))
		pub(rs, id, sum0, result(act.Result{BatchID: 0, Index: 0, States: []byte{1, 2, 3}}))
		// A result that says its states were dropped, though it was
		// small enough: no host sends that.
		pub(rs, id, sum0, result(act.Result{BatchID: 0, Index: 1, StatesDropped: 100}))
		// Work: malformed, another campaign's header, a lying batch id,
		// another campaign's id.
		pub(ws, id, "", []byte("W-not-gob"))
		other := h
		other.Source = []byte("ccai: [cubic]\n")
		pub(ws, id, "", work(act.Work{Proto: act.ProtocolVersion, Campaign: other, BatchID: 1 << 30, Items: []act.WorkItem{{Index: 1 << 30}}}))
		pub(ws, id, "", work(act.Work{Proto: act.ProtocolVersion, Campaign: h, BatchID: 5, Items: []act.WorkItem{{Index: 1 << 30}}}))
		pub(ws, "someone-else", "", work(act.Work{Proto: act.ProtocolVersion, Campaign: h, BatchID: 1 << 30, Items: []act.WorkItem{{Index: 1 << 30}}}))
		// A retry (after a dead letter) of two configurations.
		pub(ws, id, "", work(act.Work{Proto: act.ProtocolVersion, Campaign: h, BatchID: retryBit | 1<<30,
			Items: []act.WorkItem{{Index: 1 << 30}, {Index: 1<<30 + 1}}}))
	}
	dir := t.TempDir()
	// The executor registers chunk 0 (whose sum the forgeries use) in its
	// first Dispatch, which comes after the factory returns: publish the
	// forgeries then, from a goroutine that waits for it.
	var once sync.Once
	var wg sync.WaitGroup
	defer wg.Wait()
	rep, ex := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: id, MaxResult: 1 << 20},
		func(ex *Executor, h act.CampaignHeader) {
			once.Do(func() {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						ex.mu.Lock()
						ok := ex.chunks[0] != nil
						ex.mu.Unlock()
						if ok {
							break
						}
						time.Sleep(time.Millisecond)
					}
					after(ex, h)
				}()
			})
		}, act.Options{})
	sameAsLocal(t, "cluster under attack", ref, rep, refDir, dir)
	st := ex.Stats()
	t.Logf("coordinator: %+v; host: %+v", st, hosts[0].Stats())
	// The forgeries for chunk 0 may come after its true results (then a
	// well-formed one is a duplicate) or after it is merged (stale): not
	// rejected then, and still never merged.
	got := st.Rejected
	if n := got["configuration does not match its batch"] + got["index outside its batch"] + got["states outside the campaign's space"] +
		got["states dropped under the limit"] + st.Stale + st.Duplicates; n < 4 {
		t.Errorf("forged results of chunk 0: %d counted, want 4", n)
	}
	for _, r := range []string{"malformed", "another campaign", "unknown batch", "not a result"} {
		if got[r] != wantCoord[r] {
			t.Errorf("coordinator rejected %d %q, want %d", got[r], r, wantCoord[r])
		}
	}
	if st.Results != testBudget {
		t.Errorf("%d results accepted, want %d", st.Results, testBudget)
	}
	hs := hosts[0].Stats()
	for r, n := range wantHost {
		if hs.Rejected[r] != n {
			t.Errorf("host rejected %d %q, want %d (%v)", hs.Rejected[r], r, n, hs.Rejected)
		}
	}
}

// A worker host of another build refuses the campaign: it says so to the
// coordinator, naming both builds, and takes no work.
func TestWorkerOfAnotherBuildRefused(t *testing.T) {
	c := testCampaign(t)
	s := startServer(t, t.TempDir(), -1)
	hosts := startHosts(t, s.ClientURL(), 1, 1, "other-build")
	h := act.CampaignHeader{Path: c.Path, Source: c.Source, Subject: "native", Program: "this-build"}
	ex, err := NewExecutor(context.Background(), connect(t, s.ClientURL()), c, h, Options{ID: "refuse", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	ex.Dispatch(0, []act.Config{{}})
	deadline := time.Now().Add(10 * time.Second)
	for ex.Stats().Refusals == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	why := hosts[0].Stats().Refused["refuse"]
	if ex.Stats().Refusals == 0 || !strings.Contains(why, `"this-build"`) || !strings.Contains(why, `"other-build"`) {
		t.Fatalf("coordinator saw %d refusals; the host says %q", ex.Stats().Refusals, why)
	}
	time.Sleep(500 * time.Millisecond)
	info, err := ex.work.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 1 || hosts[0].Stats().Chunks != 0 {
		t.Fatalf("the refusing host took work: %d chunks left, %d run", info.State.Msgs, hosts[0].Stats().Chunks)
	}
	t.Logf("refused: %s", why)
}

// startHostProcess starts a worker host as a process of its own (this test
// binary as "host"), as `actfuzz worker --nats URL --procs N` would run.
func startHostProcess(t *testing.T, url string, procs int) (*exec.Cmd, *syncWriter) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "host", url, strconv.Itoa(procs))
	log := &syncWriter{w: &bytes.Buffer{}}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	return cmd, log
}

type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.String()
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}

// A worker host killed (SIGKILL) while it runs a chunk: the chunk is
// redelivered after AckWait to the other host, and the campaign ends
// exactly as the reference.
func TestWorkerHostKilledMidChunk(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	victim, victimLog := startHostProcess(t, s.ClientURL(), 1)
	_, otherLog := startHostProcess(t, s.ClientURL(), 1)
	dir := t.TempDir()
	var killed sync.Once
	var killer sync.WaitGroup
	defer killer.Wait()
	rep, _ := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "kill", AckWait: 2 * time.Second},
		nil, act.Options{Progress: func(st act.Status) {
			if st.Sims >= 128 {
				killed.Do(func() {
					// Kill it just after it starts a chunk (without
					// holding up the campaign, which publishes them).
					killer.Add(1)
					go func() {
						defer killer.Done()
						count := func() int { return strings.Count(victimLog.String(), `msg="chunk started"`) }
						n := count()
						for deadline := time.Now().Add(5 * time.Second); count() == n && time.Now().Before(deadline); {
							time.Sleep(time.Millisecond)
						}
						_ = victim.Process.Kill()
						t.Logf("killed worker host pid %d after %d sims", victim.Process.Pid, st.Sims)
					}()
				})
			}
		}})
	sameAsLocal(t, "cluster, a host killed", ref, rep, refDir, dir)
	// The chunks the victim started and never finished: the other host
	// ran them.
	lines := func(b *syncWriter, what string) map[string]bool {
		m := map[string]bool{}
		for l := range strings.Lines(b.String()) {
			if strings.Contains(l, `msg="`+what+`"`) {
				i := strings.Index(l, " batch=")
				m[strings.Fields(l[i+1:])[0]] = true
			}
		}
		return m
	}
	started, done, otherDone := lines(victimLog, "chunk started"), lines(victimLog, "chunk results published"), lines(otherLog, "chunk done")
	var lost []string
	for b := range started {
		if !done[b] {
			lost = append(lost, b)
			if !otherDone[b] {
				t.Errorf("chunk %s, cut short by the kill, was not run by the other host", b)
			}
		}
	}
	if len(lost) == 0 {
		t.Fatalf("the victim was killed between chunks (%d started): nothing redelivered", len(started))
	}
	t.Logf("redelivered after the kill: %v", lost)
}

// A coordinator stopped mid-campaign (its chunks in flight, results in
// the stream unmerged) and run again with --resume ends as the reference.
func TestCoordinatorResume(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	startHosts(t, s.ClientURL(), 2, 1, "")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	first, ex1 := clusterRun(t, ctx, c, connect(t, s.ClientURL()), dir, Options{ID: "resume"}, nil,
		act.Options{CheckpointEvery: 1, Progress: func(st act.Status) {
			if st.Sims >= 192 {
				cancel()
			}
		}})
	if first.Sims >= testBudget {
		t.Fatalf("the first coordinator ran all %d simulations", first.Sims)
	}
	info, err := ex1.js.Stream(context.Background(), resultsStream("resume"))
	if err != nil {
		t.Fatal(err)
	}
	left := info.CachedInfo().State.Msgs
	rep, ex := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "resume", Resume: true}, nil,
		act.Options{Resume: true})
	t.Logf("stopped at %d sims with %d results in the stream; resumed: %+v", first.Sims, left, ex.Stats())
	if st := ex.Stats(); st.RejectedTotal() != 0 || st.Skipped == 0 {
		t.Errorf("the resumed coordinator rejected its predecessor's results (%v) or published every chunk again (%d skipped)", st.Rejected, st.Skipped)
	}
	sameAsLocal(t, "resumed", ref, rep, refDir, dir)
}

// The NATS server restarts (file storage) in the middle of a campaign,
// away for three times the coordinator's lease: the coordinator and the
// worker hosts reconnect, the coordinator renews its lease (nobody took
// it meanwhile) instead of giving the campaign up, and the campaign ends
// as the reference.
func TestServerRestart(t *testing.T) {
	srv := startRestartable(t)
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	url := srv.s.ClientURL()
	startHosts(t, url, 2, 1, "")
	dir := t.TempDir()
	var restarted sync.Once
	var wg sync.WaitGroup
	defer wg.Wait()
	rep, ex := clusterRun(t, context.Background(), c, connect(t, url), dir, Options{ID: "restart", AckWait: 3 * time.Second, Lease: time.Second}, nil,
		act.Options{Progress: func(st act.Status) {
			if st.Sims >= 128 {
				restarted.Do(func() {
					srv.stop()
					t.Logf("server stopped at %d sims", st.Sims)
					wg.Add(1)
					go func() {
						defer wg.Done()
						srv.restart(3 * time.Second)
						t.Log("server restarted")
					}()
				})
			}
		}})
	t.Logf("after the restart: %+v", ex.Stats())
	sameAsLocal(t, "server restarted", ref, rep, refDir, dir)
}

// A chunk whose hosts all die on it (they take it and never ack) is a dead
// letter after MaxDeliver deliveries: it leaves the work stream, its
// configurations are published again one by one, and each of those that
// is a dead letter too becomes a crash fault result.
func TestDeadLetter(t *testing.T) {
	c := testCampaign(t)
	s := startServer(t, t.TempDir(), -1)
	ex := testExecutor(t, s, c, Options{ID: "dead", AckWait: 300 * time.Millisecond, MaxDeliver: 2})
	ex.Dispatch(100, make([]act.Config, 5))
	// The doomed hosts: each takes the chunk and dies without a word.
	cons, err := ex.js.Consumer(context.Background(), workStream("dead"), workersConsumer)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			b, err := cons.Fetch(1, jetstream.FetchMaxWait(200*time.Millisecond))
			if err != nil {
				continue
			}
			for range b.Messages() {
			}
		}
	}()
	got := map[int]bool{}
	for len(got) < 5 {
		select {
		case r := <-ex.Results():
			if r.Index < 100 || r.Index >= 105 || got[r.Index] || r.Fault == nil || r.Fault.Kind != "crash" ||
				!strings.Contains(r.Fault.Detail, fmt.Sprintf("configuration %d delivered 2 times", r.Index)) ||
				!strings.Contains(r.Fault.Detail, "after its chunk of configurations 100–104 was a dead letter") {
				t.Fatalf("result %+v, want one crash fault for each of configurations 100–104", r)
			}
			got[r.Index] = true
		case <-ctx.Done():
			t.Fatalf("%d of 5 crash faults; %+v", len(got), ex.Stats())
		}
	}
	// The chunk, then each of its configurations alone.
	if st := ex.Stats(); st.DeadLetter != 6 || st.Retried != 5 || st.Crashes != 5 {
		t.Fatalf("%+v", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		info, err := ex.work.Info(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead letter is still in the work stream: %d messages", info.State.Msgs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A coordinator killed (SIGKILL) mid-campaign, its chunks still with the
// hosts and its results in the stream, resumed with --resume: the campaign
// ends as the reference.
func TestCoordinatorKilled(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	startHosts(t, s.ClientURL(), 2, 1, "")
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	coord := exec.Command(exe, "coordinator", s.ClientURL(), dir)
	coord.Stderr = os.Stderr
	if err := coord.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if info, err := act.ReadCheckpoint(dir, "act"); err == nil && info.Sims >= 192 {
			break
		}
		if time.Now().After(deadline) {
			_ = coord.Process.Kill()
			t.Fatal("the coordinator did not checkpoint 192 simulations in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = coord.Process.Kill()
	_ = coord.Wait()
	info, err := act.ReadCheckpoint(dir, "act")
	if err != nil {
		t.Fatal(err)
	}
	if info.Sims >= testBudget {
		t.Fatalf("the coordinator finished (%d sims) before it was killed", info.Sims)
	}
	rep, ex := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "killed", Resume: true}, nil,
		act.Options{Resume: true})
	t.Logf("killed after a checkpoint of %d sims; resumed: %+v", info.Sims, ex.Stats())
	if st := ex.Stats(); st.RejectedTotal() != 0 || st.Skipped == 0 {
		t.Errorf("the resumed coordinator rejected its predecessor's results (%v) or published every chunk again (%d skipped)", st.Rejected, st.Skipped)
	}
	sameAsLocal(t, "resumed after a kill", ref, rep, refDir, dir)
}

// A result over the server's max_payload comes in parts, put together by
// the coordinator: the campaign ends as the reference does. A malformed
// or foreign part is rejected and counted.
func TestResultsInParts(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: 2048})
	hosts := startHosts(t, s.ClientURL(), 2, 1, "")
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	rep, ex := clusterRun(t, context.Background(), c, nc, dir, Options{ID: "parts", Chunk: 2}, func(ex *Executor, h act.CampaignHeader) {
		for _, part := range []string{"0/0/0", "0/0/5/2", "x/0/0/2", "0/0/0/99999999"} {
			m := &nats.Msg{Subject: resultSubject("parts"), Header: nats.Header{}, Data: []byte{'R', 1}}
			m.Header.Set(hdrCampaign, "parts")
			m.Header.Set(hdrPart, part)
			if _, err := ex.js.PublishMsg(context.Background(), m); err != nil {
				t.Error(err)
			}
		}
	}, act.Options{})
	sameAsLocal(t, "cluster", ref, rep, refDir, dir)
	parted := 0
	for _, h := range hosts {
		parted += h.Stats().Parted
	}
	st := ex.Stats()
	t.Logf("%+v; hosts published %d results in parts", st, parted)
	if st.Assembled == 0 || st.Assembled != parted || st.Results != testBudget {
		t.Fatalf("%d results put together from parts, hosts published %d in parts", st.Assembled, parted)
	}
	if st.Rejected["malformed part"] != 4 {
		t.Fatalf("rejected %v, want 4 malformed parts", st.Rejected)
	}
}

// Results in parts from several hosts come interleaved; when the parts
// held reach the coordinator's limit, the first part of another result
// waits (naked, redelivered later) instead of being lost: every result
// arrives and the campaign ends as the local one. (Rejected and acked,
// such a part would leave its result incomplete for ever: a hang.)
func TestPartsDeferred(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: 2048})
	startHosts(t, s.ClientURL(), 2, 2, "")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	rep, ex := clusterRun(t, ctx, c, connect(t, s.ClientURL()), dir, Options{ID: "deferred", Chunk: 2}, func(ex *Executor, _ act.CampaignHeader) {
		ex.mu.Lock()
		ex.partLimit = 2600 // the parts (1 KiB each here) of two results at a time
		ex.mu.Unlock()
	}, act.Options{})
	sameAsLocal(t, "cluster", ref, rep, refDir, dir)
	st := ex.Stats()
	t.Logf("%+v", st)
	if st.Deferred == 0 || st.Assembled == 0 || st.RejectedTotal() != 0 {
		t.Fatalf("%d parts deferred, %d results put together, rejected %v", st.Deferred, st.Assembled, st.Rejected)
	}
}

// One configuration of a chunk kills every worker host that comes to it
// (the others of the chunk are innocent): the chunk is a dead letter, its
// configurations without a result are run again one by one, and only the
// guilty one, a dead letter alone too, is charged a crash fault. The
// campaign then ends as a local campaign (isolated worker processes) in
// which that configuration crashes its worker process: the same regions
// at every k, the same findings, byte-identical seed files but the crash's
// own (its detail says how it crashed: a worker process died locally, a
// host on each delivery here).
func TestDeadLetterChargesOneConfiguration(t *testing.T) {
	c := testCampaign(t)
	s := startServer(t, t.TempDir(), -1)
	// Configuration 100, the fifth of chunk 96–103: the four before it
	// get results from the first delivery, the three after it none.
	const guilty = 100
	var mu sync.Mutex
	seeds := map[uint64]map[int]bool{} // of every configuration the hosts saw
	// The coordinator replays a crash in a worker process of its own
	// before it keeps it (act's verifier: a finding must replay), so the
	// guilty configuration's seed crashes that process too: set before
	// the hosts charge it, inherited by the process the verifier starts.
	t.Setenv(crashSeedEnv, "")
	startHosts(t, s.ClientURL(), 2, 1, "", func(w *Worker) {
		w.dies = func(it act.WorkItem) bool {
			mu.Lock()
			defer mu.Unlock()
			if seeds[it.Config.Seed] == nil {
				seeds[it.Config.Seed] = map[int]bool{}
			}
			seeds[it.Config.Seed][it.Index] = true
			if it.Index == guilty {
				os.Setenv(crashSeedEnv, strconv.FormatUint(it.Config.Seed, 10))
			}
			return it.Index == guilty
		}
	})
	dir := t.TempDir()
	start := time.Now()
	// An AckWait long enough that a loaded machine's heartbeats keep an
	// innocent chunk from being redelivered MaxDeliver times.
	rep, ex := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir,
		Options{ID: "guilty", AckWait: 2 * time.Second, MaxDeliver: 2}, nil, act.Options{})
	st := ex.Stats()
	t.Logf("cluster: %d sims in %v; %+v", rep.Sims, time.Since(start).Round(time.Millisecond), st)
	if st.DeadLetter != 2 || st.Retried != 4 || st.Crashes != 1 || st.RejectedTotal() != 0 {
		t.Errorf("%+v: want 2 dead letters (the chunk, then configuration %d alone), 4 configurations retried, 1 crash", st, guilty)
	}
	var crash *act.FindingGroup
	for _, g := range rep.Findings {
		if g.Seed.Finding.Kind == "crash" {
			if crash != nil {
				t.Fatalf("two crash finding groups: %s and %s", crash.Path, g.Path)
			}
			crash = g
		}
	}
	if crash == nil || crash.Count != 1 || crash.FirstSim != guilty ||
		!strings.Contains(crash.Seed.Finding.Detail, fmt.Sprintf("configuration %d delivered 2 times", guilty)) ||
		!strings.Contains(crash.Seed.Finding.Detail, "a host died on it each time") {
		t.Fatalf("crash finding %+v, want one, of configuration %d", crash, guilty)
	}
	t.Logf("crash: %s", crash.Seed.Finding.Detail)
	// The local run crashes the worker process on the guilty
	// configuration's seed: it must be that configuration's alone.
	seed := crash.Seed.Seed
	mu.Lock()
	owners := seeds[seed]
	mu.Unlock()
	if len(owners) != 1 || !owners[guilty] {
		t.Fatalf("seed %d is that of configurations %v: pick another guilty configuration", seed, owners)
	}
	t.Setenv(crashSeedEnv, strconv.FormatUint(seed, 10))
	refDir := t.TempDir()
	ref, err := act.Run(context.Background(), c, act.Options{Budget: testBudget, Workers: 2, Isolate: true, Lag: testLag, Out: refDir})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := outcome(ref), outcome(rep); a != b {
		t.Fatalf("local, configuration %d crashing:\n%s\ncluster, configuration %d killing its hosts:\n%s", guilty, a, guilty, b)
	}
	var local *act.FindingGroup
	for _, g := range ref.Findings {
		if g.Seed.Finding.Kind == "crash" {
			local = g
		}
	}
	if local == nil || local.FirstSim != guilty || !strings.Contains(local.Seed.Finding.Detail, "worker died") {
		t.Fatalf("the local crash: %+v", local)
	}
	sameSeedsBut(t, ref, rep, refDir, dir, local.Path)
}

// A configuration retried alone has an id and a sum that depend only on
// it: a coordinator that never published the retry (a resumed one) finds
// its predecessor's, and an id that is no retry of a known chunk is not.
func TestRetryChunkID(t *testing.T) {
	c := testCampaign(t)
	s := startServer(t, t.TempDir(), -1)
	ex := testExecutor(t, s, c, Options{ID: "retry"})
	h := act.CampaignHeader{Path: c.Path, Source: c.Source, Subject: "native", Program: "p"} // testExecutor's
	gs := make([]act.Config, 16)
	for i := range gs {
		gs[i].Seed = uint64(1000 + i)
	}
	ex.Dispatch(64, gs)
	want := workSum(act.Work{Proto: act.ProtocolVersion, Campaign: h, BatchID: retryBit | 70, Items: []act.WorkItem{{Index: 70, Config: gs[6]}}})
	ex.mu.Lock()
	defer ex.mu.Unlock()
	if r := ex.lookup(retryBit | 70); r == nil || r.first != 70 || r.n != 1 || r.sum != want || r.of == nil || r.of.first != 64 {
		t.Fatalf("retry of configuration 70: %+v", r)
	}
	if ex.chunks[retryBit|70] == nil || ex.lookup(64) == nil || ex.lookup(64).sum == want {
		t.Fatal("the retry is not registered, or is confused with chunk 64")
	}
	for _, id := range []uint64{retryBit | 200, retryBit<<1 | 70, retryBit | 63, 70} {
		if ex.lookup(id) != nil {
			t.Errorf("batch id %#x found", id)
		}
	}
}

// traceCampaign is a campaign over two trace files of the user's, written
// in a directory of its own: lte.trace (49 kB gzipped) and wifi.trace.
func traceCampaign(t *testing.T) *act.Campaign {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"lte.trace", "wifi.trace"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "netenv", "linktrace", "traces", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(`
ccai: [reno]
profile: linux-3.10
bytes: 300000
link_traces: [lte.trace, wifi.trace]
params:
  link_trace: {values: [user1, user2, steady]}
  delay: {min: 1, max: 200, step: 1}
conditions:
  - {name: undo-increase, when: 'prev.ca_state == "recovery" && ca_state == "open" && cwnd > prior_cwnd'}
  - {name: slow, when: 'srtt > 150'}
window: 64
`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := act.LoadCampaign(path)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A campaign whose trace files are larger than the server's max_payload
// runs as it runs locally: the trace files do not travel in the KV record
// nor in the work messages.
func TestTraceFilesOverMaxPayload(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: a campaign over trace files (the object store) between a coordinator and worker hosts, as TestWorkerServesTwoCampaigns runs under -race")
	}
	c := traceCampaign(t)
	const budget, maxPayload = 128, 16 << 10
	h := c.Header("native")
	size := 0
	for _, f := range h.LinkTraces {
		size += len(f.Gzip)
	}
	if size <= maxPayload {
		t.Fatalf("trace files of %d bytes: the test wants more than max_payload", size)
	}
	ref, refDir := referenceOf(t, c, budget)
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: maxPayload})
	startHosts(t, s.ClientURL(), 2, 1, "")
	nc := connect(t, s.ClientURL())
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var ex *Executor
	rep, err := act.Run(ctx, c, act.Options{Budget: budget, Lag: testLag, Out: dir,
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			var err error
			ex, err = NewExecutor(ctx, nc, c, h, Options{ID: "traces", Logger: testLogger(t)})
			return ex, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes of trace files, max_payload %d: %+v", size, maxPayload, ex.Stats())
	sameAsLocal(t, "cluster", ref, rep, refDir, dir)
	// A finished campaign leaves no trace file behind.
	obs, err := traces(context.Background(), ex.js, false)
	if err != nil {
		t.Fatal(err)
	}
	if l, err := obs.List(context.Background()); err == nil && len(l) > 0 {
		t.Errorf("%d trace files left after the campaign", len(l))
	}
}

// A worker host checks the trace files it reads against the SHA-256 the
// campaign header names: another content is refused, and no work taken.
func TestTraceFileTampered(t *testing.T) {
	c := traceCampaign(t)
	s := startServer(t, t.TempDir(), -1)
	h := c.Header("native")
	ex, err := NewExecutor(context.Background(), connect(t, s.ClientURL()), c, h, Options{ID: "tampered", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	obs, err := traces(context.Background(), ex.js, false)
	if err != nil {
		t.Fatal(err)
	}
	// lte.trace's object gets wifi.trace's content (well-formed, so only
	// the sum tells).
	if _, err := obs.PutBytes(context.Background(), traceObject("tampered", 0), h.LinkTraces[1].Gzip); err != nil {
		t.Fatal(err)
	}
	ex.Dispatch(0, []act.Config{{}})
	hosts := startHosts(t, s.ClientURL(), 1, 1, "")
	deadline := time.Now().Add(10 * time.Second)
	for ex.Stats().Refusals == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	why := hosts[0].Stats().Refused["tampered"]
	if ex.Stats().Refusals == 0 || !strings.Contains(why, "lte.trace") || !strings.Contains(why, "does not match its sha256") {
		t.Fatalf("coordinator saw %d refusals; the host says %q", ex.Stats().Refusals, why)
	}
	if hosts[0].Stats().Chunks != 0 {
		t.Fatalf("the host ran %d chunks", hosts[0].Stats().Chunks)
	}
	t.Logf("refused: %s", why)
}

// A campaign file too large for one message of the server is refused at
// the start, naming its size and the limit.
func TestCampaignFileOverMaxPayload(t *testing.T) {
	c := testCampaign(t)
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: 2048})
	h := act.CampaignHeader{Path: c.Path, Source: append([]byte("# "+strings.Repeat("x", 4096)+"\n"), c.Source...), Subject: "native", Program: "p"}
	_, err := NewExecutor(context.Background(), connect(t, s.ClientURL()), c, h, Options{ID: "large", Logger: testLogger(t)})
	if !errors.Is(err, ErrHeaderTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("campaign file c.yaml: %d bytes", len(h.Source))) ||
		!strings.Contains(err.Error(), "max_payload 2048") {
		t.Fatalf("error %v", err)
	}
	t.Log(err)
}

// runCampaign runs c through a cluster executor of id on nc with budget
// (safe off the test's goroutine).
func runCampaign(ctx context.Context, t *testing.T, c *act.Campaign, nc *nats.Conn, id, out string, budget int, progress func(act.Status)) (*act.Report, error) {
	return act.Run(ctx, c, act.Options{Budget: budget, Lag: testLag, Out: out, Progress: progress,
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			return NewExecutor(ctx, nc, c, h, Options{ID: id, Logger: testLogger(t)})
		}})
}

// One worker host serves two campaigns at once: the second completes
// while the first, which sorts first by id, is held (a host serving one
// campaign at a time would serve only the first: the test would end at
// its timeout), and both end as they end locally.
func TestWorkerServesTwoCampaigns(t *testing.T) {
	a, b := testCampaign(t), traceCampaign(t)
	const budgetB = 128
	refA, refDirA := reference(t, a)
	refDirB := t.TempDir()
	refB, err := act.Run(context.Background(), b, act.Options{Budget: budgetB, Workers: 1, Lag: testLag, Out: refDirB})
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, t.TempDir(), -1)
	var mu sync.Mutex
	running, most := 0, 0
	hosts := startHosts(t, s.ClientURL(), 1, 2, "", func(w *Worker) {
		w.running = func(uint64, act.WorkItem) func() {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			return func() {
				mu.Lock()
				running--
				mu.Unlock()
			}
		}
	})
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if most > 2 {
			t.Errorf("%d simulations ran at once on a host of 2 procs serving two campaigns", most)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dirA, dirB := t.TempDir(), t.TempDir()
	bDone := make(chan struct{})
	var repB *act.Report
	var errB error
	go func() {
		defer close(bDone)
		repB, errB = runCampaign(ctx, t, b, connect(t, s.ClientURL()), "b-second", dirB, budgetB, nil)
	}()
	held := false
	repA, err := runCampaign(ctx, t, a, connect(t, s.ClientURL()), "a-first", dirA, testBudget, func(st act.Status) {
		if st.Sims >= 64 && !held {
			held = true
			select {
			case <-bDone:
			case <-ctx.Done():
			}
		}
	})
	<-bDone
	if err != nil {
		t.Fatalf("campaign a-first: %v (b-second, which a-first waited for: %v)", err, errB)
	}
	if errB != nil {
		t.Fatalf("campaign b-second, while a-first was held: %v", errB)
	}
	t.Logf("host: %+v", hosts[0].Stats())
	sameAsLocal(t, "a-first: cluster", refA, repA, refDirA, dirA)
	sameAsLocal(t, "b-second: cluster", refB, repB, refDirB, dirB)
}

// A host's slot runs a configuration, not a chunk: the configurations of
// one chunk run at once in the slots of a host (--procs 4) that serves one
// campaign, never more than its procs at once, and the campaign ends as
// the reference. The first configuration of the first chunk holds its
// slot until another of its chunk starts: a host that ran a chunk's
// configurations one at a time would keep it waiting (the test fails
// then, after a timeout).
func TestChunkRunsOverSlots(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	const procs = 4
	var mu sync.Mutex
	running, most, mostOfChunk := 0, 0, 0
	ofChunk := map[uint64]int{}
	together := make(chan struct{}) // closed when two configurations of a chunk run at once
	var once sync.Once
	startHosts(t, s.ClientURL(), 1, procs, "", func(w *Worker) {
		w.running = func(batch uint64, it act.WorkItem) func() {
			mu.Lock()
			running++
			ofChunk[batch]++
			most, mostOfChunk = max(most, running), max(mostOfChunk, ofChunk[batch])
			if ofChunk[batch] > 1 {
				once.Do(func() { close(together) })
			}
			mu.Unlock()
			if it.Index == 0 {
				select {
				case <-together:
				case <-time.After(20 * time.Second):
				}
			}
			return func() {
				mu.Lock()
				running--
				ofChunk[batch]--
				mu.Unlock()
			}
		}
	})
	dir := t.TempDir()
	rep, _ := clusterRun(t, context.Background(), c, connect(t, s.ClientURL()), dir, Options{ID: "slots", Chunk: 8}, nil, act.Options{})
	mu.Lock()
	defer mu.Unlock()
	t.Logf("at most %d simulations at once, %d of one chunk", most, mostOfChunk)
	if mostOfChunk < 2 {
		t.Errorf("the configurations of a chunk ran one at a time (at most %d at once)", mostOfChunk)
	}
	if most > procs {
		t.Errorf("%d simulations ran at once on a host of %d procs", most, procs)
	}
	sameAsLocal(t, "cluster", ref, rep, refDir, dir)
}

// The host's slots go to the waiting campaign that holds the fewest.
func TestShareFair(t *testing.T) {
	ctx := context.Background()
	sh := newShare(2)
	for range 2 {
		if err := sh.acquire(ctx, "a"); err != nil {
			t.Fatal(err)
		}
	}
	// Both wait; a asked first.
	got := make(chan string, 2)
	var wg sync.WaitGroup
	ask := func(id string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if sh.acquire(ctx, id) == nil {
				got <- id
			}
		}()
		for { // until it waits
			sh.mu.Lock()
			n := len(sh.waiters)
			waits := n > 0 && sh.waiters[n-1].id == id
			sh.mu.Unlock()
			if waits {
				break
			}
			runtime.Gosched()
		}
	}
	ask("a")
	ask("b")
	sh.release("a") // a holds 1, b none: b's turn
	if id := <-got; id != "b" {
		t.Fatalf("the slot went to %s, want b", id)
	}
	sh.release("a") // a holds none, b one: a's turn
	if id := <-got; id != "a" {
		t.Fatalf("the slot went to %s, want a", id)
	}
	wg.Wait()
	// A waiter whose context ends leaves the queue.
	cctx, ccancel := context.WithCancel(ctx)
	ccancel()
	if err := sh.acquire(cctx, "c"); err == nil || len(sh.waiters) != 0 || sh.free != 0 {
		t.Fatalf("cancelled acquire: %v, %d waiters, %d free", err, len(sh.waiters), sh.free)
	}
}

// A chunk over the server's max_payload can never be published: the
// campaign stops with an error naming its size and the limit (it used to
// be retried for ever).
func TestChunkOverMaxPayload(t *testing.T) {
	c := testCampaign(t)
	s := startServerWith(t, &server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(),
		NoLog: true, NoSigs: true, MaxPayload: 2048})
	nc := connect(t, s.ClientURL())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := act.Run(ctx, c, act.Options{Budget: 64, Lag: 1, Out: t.TempDir(),
		Executor: func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
			return NewExecutor(ctx, nc, c, h, Options{ID: "bigchunk", Chunk: 64, Logger: testLogger(t)})
		}})
	if err == nil || !strings.Contains(err.Error(), "chunk of configurations 0–63") || !strings.Contains(err.Error(), "max_payload of 2048") {
		t.Fatalf("error %v", err)
	}
	t.Log(err)
}

// A result over the coordinator's MaxResult is a cap, not a crash: its
// host sends it without its states, the coordinator merges everything
// else (its hits make findings) and counts it (Stats.Dropped, the report's
// StatesDropped). What is dropped depends on the result alone, so two
// clusters of other shapes with the same limit end alike. The first lag
// batches are chosen before anything is merged, so their configurations,
// and hence their findings, are the reference's: a hit lost with its
// result's states would show there.
func TestResultOverMaxResult(t *testing.T) {
	if race.Enabled {
		t.Skip("under -race: the same concurrent code: a coordinator and worker hosts exchanging results, as TestClusterMatchesLocal and TestResultsInParts run under -race; the cap is a size check of one goroutine")
	}
	c := testCampaign(t)
	ref, _ := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	startHosts(t, s.ClientURL(), 2, 2, "")
	nc := connect(t, s.ClientURL())
	const limit = 2 << 10
	run := func(id string, chunk int) (*act.Report, string) {
		dir := t.TempDir()
		rep, ex := clusterRun(t, context.Background(), c, nc, dir, Options{ID: id, MaxResult: limit, Chunk: chunk}, nil, act.Options{})
		st := ex.Stats()
		t.Logf("%s: %d of %d results without states; %s", id, rep.StatesDropped, rep.Sims, outcome(rep))
		if st.Dropped != rep.StatesDropped || st.Results != testBudget || st.Crashes != 0 || st.DeadLetter != 0 || st.RejectedTotal() != 0 {
			t.Fatalf("%s: %+v, report's StatesDropped %d", id, st, rep.StatesDropped)
		}
		return rep, dir
	}
	a, dirA := run("capped-a", 8)
	if a.StatesDropped == 0 || a.StatesDropped == testBudget {
		t.Fatalf("limit %d: %d of %d results without states; the test wants some", limit, a.StatesDropped, testBudget)
	}
	prefix := func(r *act.Report) string {
		var b strings.Builder
		for _, g := range r.Findings {
			if g.FirstSim < testLag*64 {
				fmt.Fprintf(&b, "%s %s sim %d seed %d\n", g.Seed.Finding.Kind, g.Seed.Finding.Condition, g.FirstSim, g.Seed.Seed)
			}
		}
		return b.String()
	}
	if x, y := prefix(ref), prefix(a); x != y || x == "" {
		t.Fatalf("findings first made in the first %d simulations: local\n%s\ncapped\n%s", testLag*64, x, y)
	}
	b, dirB := run("capped-b", 3)
	if x, y := outcome(a), outcome(b); x != y || a.StatesDropped != b.StatesDropped {
		t.Fatalf("chunks of 8:\n%s\nchunks of 3:\n%s", x, y)
	}
	sameSeeds(t, a, b, dirA, dirB)
}

// campaignIDs lists the bucket's live keys, sorted, and a listing it cannot
// finish (here: its context ended) is an error, not a shorter list.
func TestCampaignIDs(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	nc := connect(t, s.ClientURL())
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	kv, err := campaigns(ctx, js, true)
	if err != nil {
		t.Fatal(err)
	}
	if ids, err := campaignIDs(ctx, kv, listWait); err != nil || len(ids) != 0 {
		t.Fatalf("an empty bucket: %q, %v", ids, err)
	}
	for _, k := range []string{"c", "a", "b", "a"} {
		if _, err := kv.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := kv.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if ids, err := campaignIDs(ctx, kv, listWait); err != nil || !slices.Equal(ids, []string{"a", "c"}) {
		t.Fatalf("got %q, %v; want [a c]", ids, err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	start := time.Now()
	if ids, err := campaignIDs(done, kv, listWait); err == nil {
		t.Fatalf("a listing whose context ended: %q, no error", ids)
	}
	if d := time.Since(start); d > listWait/2 {
		t.Fatalf("a listing whose context ended took %v", d)
	}
	// A watcher whose end-of-initial-values marker never comes, as in
	// the hang campaignIDs works around: the wait ends the listing.
	start = time.Now()
	if ids, err := campaignIDs(ctx, stuckKV{kv}, 100*time.Millisecond); err == nil {
		t.Fatalf("a listing without its end: %q, no error", ids)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("a listing without its end took %v", d)
	}
}

// stuckKV lists one key and then nothing until the listing's context
// ends.
type stuckKV struct{ jetstream.KeyValue }

func (stuckKV) ListKeys(ctx context.Context, _ ...jetstream.WatchOpt) (jetstream.KeyLister, error) {
	keys := make(chan string, 1)
	keys <- "a"
	go func() {
		<-ctx.Done()
		close(keys)
	}()
	return stuckLister(keys), nil
}

type stuckLister chan string

func (l stuckLister) Keys() <-chan string { return l }
func (stuckLister) Stop() error           { return nil }
