package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The three commands of a cluster, as a user runs them: a NATS server
// (embedded here), `worker --nats URL --procs N` and `run --nats URL`. The
// campaign ends as the same campaign run locally with the same --lag.
func TestRunOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server, a worker host and two campaigns")
	}
	s := startNATS(t, 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := "ccai: [reno]\nbytes: 200000\nbudget: 160\nwindow: 32\nconditions:\n  - {name: c, when: \"cwnd > 30\"}\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if code, _, errs := runCLI(ctx, "worker", "--nats", s.ClientURL(), "--procs", "2", "--quiet"); code != exitOK {
			t.Errorf("worker: exit %d: %s", code, errs)
		}
	}()
	defer wg.Wait()
	defer cancel()
	local, cl := filepath.Join(dir, "local"), filepath.Join(dir, "cluster")
	code, _, errs := runCLI(context.Background(), "run", path, "--out", local, "--lag", "3", "--isolate=false", "--workers", "1", "--quiet")
	if code != exitFound {
		t.Fatalf("local run: exit %d: %s", code, errs)
	}
	start := time.Now()
	code, _, errs = runCLI(context.Background(), "run", path, "--out", cl, "--nats", s.ClientURL(), "--lag", "3", "-v")
	t.Logf("cluster run: %v", time.Since(start))
	if code != exitFound {
		t.Fatalf("cluster run: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "coordinator of campaign") {
		t.Errorf("the coordinator does not say what it is: %s", errs)
	}
	regions := func(out string) string {
		b, err := os.ReadFile(filepath.Join(out, "status.json"))
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Sims     int               `json:"sims"`
			Findings int               `json:"findings"`
			Regions  map[string]uint64 `json:"regions"`
		}
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatal(err)
		}
		r, _ := json.Marshal(st)
		return string(r)
	}
	if a, b := regions(local), regions(cl); a != b {
		t.Fatalf("local %s\ncluster %s", a, b)
	}
	seeds, _ := filepath.Glob(filepath.Join(local, "findings", "*", "*.json"))
	if len(seeds) == 0 {
		t.Fatal("no seeds to compare")
	}
	sameSeeds := func(cl string) {
		t.Helper()
		for _, a := range seeds {
			rel, _ := filepath.Rel(local, a)
			x, _ := os.ReadFile(a)
			y, err := os.ReadFile(filepath.Join(cl, rel))
			if err != nil || string(x) != string(y) {
				t.Fatalf("seed %s differs (%v)", rel, err)
			}
		}
	}
	sameSeeds(cl)
	// The store in two parts kept by two `store` processes: the same
	// campaign.
	for j := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _, errs := runCLI(ctx, "store", "--nats", s.ClientURL(), "--part", fmt.Sprint(j), "--quiet"); code != exitOK {
				t.Errorf("store --part %d: exit %d: %s", j, code, errs)
			}
		}()
	}
	parted := filepath.Join(dir, "parted")
	code, _, errs = runCLI(context.Background(), "run", path, "--out", parted, "--nats", s.ClientURL(), "--lag", "3", "--store-parts", "2", "-v")
	if code != exitFound || !strings.Contains(errs, "store --nats "+s.ClientURL()+" --part J") {
		t.Fatalf("cluster run with store parts: exit %d: %s", code, errs)
	}
	if a, b := regions(local), regions(parted); a != b {
		t.Fatalf("local %s\nwith store parts %s", a, b)
	}
	sameSeeds(parted)
	// Bad input names the flag.
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"--nats", []string{"run", path, "--nats", "http://x"}},
		{"--nats-creds", []string{"run", path, "--nats-creds", "x"}},
		{"--nats-creds", []string{"run", path, "--nats", s.ClientURL(), "--nats-creds", filepath.Join(dir, "none")}},
		{"--lag", []string{"run", path, "--lag", "-1"}},
		{"--procs", []string{"worker", "--nats", s.ClientURL(), "--procs", "0"}},
		{"--subject", []string{"worker", "--nats", s.ClientURL(), "--subject", "bogus"}},
		{"--store-parts", []string{"run", path, "--nats", s.ClientURL(), "--store-parts", "17"}},
		{"--store-parts", []string{"run", path, "--store-parts", "2"}},
		{"--part", []string{"store", "--nats", s.ClientURL()}},
		{"--nats", []string{"store", "--part", "0"}},
		{"--memory", []string{"store", "--nats", s.ClientURL(), "--part", "0", "--memory", "12XB"}},
		{"--memory", []string{"store", "--nats", s.ClientURL(), "--part", "0", "--memory", "0"}},
		{"--lease", []string{"store", "--nats", s.ClientURL(), "--part", "0", "--lease", "10ms"}},
	} {
		code, _, errs := runCLI(context.Background(), tc.args...)
		if code != exitUsage || !strings.Contains(errs, tc.flag) {
			t.Errorf("%v: exit %d, want 2 naming %s: %s", tc.args, code, tc.flag, errs)
		}
	}
}

// A store process at its --memory cap, or the coordinator's index over
// run's --memory, ends the campaign after a checkpoint: run exits 3,
// saying so and how to continue. A store process without a cap of its
// own keeps to run's --memory as the index does.
func TestRunStoreCapped(t *testing.T) {
	if testing.Short() {
		t.Skip("starts NATS servers, worker hosts and store processes")
	}
	for _, tc := range []struct {
		name       string
		parts, run []string // the store processes' and run's extra flags
		part1      []string // part 1's besides
		says, next string   // what the message names, and how to continue
	}{
		{"part", nil, nil, []string{"--memory", "1KB"}, "store part 1 holds", ""},
		{"index", []string{"--memory", "1GB"}, []string{"--memory", "1KB"}, nil, "coordinator's index", " --memory SIZE"},
		{"parts by run's budget", nil, []string{"--memory", "1KB"}, nil, "the store's share of the campaign's memory budget", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path, ctx, serve := cliCluster(t, "ccai: [reno]\nbytes: 200000\nbudget: 160\nwindow: 32\n")
			dir := filepath.Dir(path)
			serve(ctx, "worker", "--nats", s.ClientURL(), "--procs", "2", "--quiet")
			serve(ctx, append([]string{"store", "--nats", s.ClientURL(), "--part", "0", "--quiet"}, tc.parts...)...)
			serve(ctx, slices.Concat([]string{"store", "--nats", s.ClientURL(), "--part", "1", "--quiet"}, tc.parts, tc.part1)...)
			out := filepath.Join(dir, "out")
			args := append([]string{"run", path, "--out", out, "--nats", s.ClientURL(), "--store-parts", "2", "--quiet"}, tc.run...)
			code, _, errs := runCLI(context.Background(), args...)
			// The resume hint names the cluster's flags (--nats …) after --out.
			hint := "--resume --out " + out
			if code != exitInternal || !strings.Contains(errs, tc.says) || !strings.Contains(errs, hint) ||
				(tc.next != "" && !strings.Contains(errs[strings.Index(errs, hint):], tc.next)) {
				t.Fatalf("exit %d, want 3 naming the cap and how to continue: %s", code, errs)
			}
			if _, err := os.Stat(filepath.Join(out, "coverage", "checkpoint-act.gob")); err != nil {
				t.Fatalf("no checkpoint: %v", err)
			}
			if tc.run == nil {
				return // continuing needs a store process with a larger cap
			}
			// As the message says: --resume with a larger --memory, the
			// same store processes.
			resume := append([]string{"run", path, "--out", out, "--nats", s.ClientURL(), "--store-parts", "2", "--quiet", "--resume"}, "--memory", "1GB")
			if code, _, errs := runCLI(context.Background(), resume...); code != exitOK {
				t.Fatalf("resumed with --memory 1GB: exit %d: %s", code, errs)
			}
		})
	}
}

// A store process that stops mid-campaign and is started again, or
// whose standby (a second process for its part) is running, hands its
// part over without the coordinator stopping: run continues from its
// checkpoint (here, before the first, from the start) and ends as a
// local run does.
func TestRunStorePartRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a NATS server, a worker host and three store processes")
	}
	summary := func(stdout string) string {
		var v struct {
			Report struct {
				Sims    int               `json:"sims"`
				Regions map[string]uint64 `json:"regions"`
			} `json:"report"`
		}
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		b, _ := json.Marshal(v.Report)
		return string(b)
	}
	var local string
	for _, standby := range []bool{false, true} {
		t.Run(fmt.Sprintf("standby=%v", standby), func(t *testing.T) {
			s, path, ctx, serve := cliCluster(t, "ccai: [reno]\nbytes: 200000\nbudget: 2400\nwindow: 64\noracles: none\n")
			dir := filepath.Dir(path)
			if local == "" {
				t0 := time.Now()
				code, out, errs := runCLI(context.Background(), "run", path, "--out", filepath.Join(dir, "local"), "--lag", "3", "--isolate=false", "--quiet", "--json")
				t.Logf("local run: %v", time.Since(t0))
				if code != exitOK {
					t.Fatalf("local run: exit %d: %s", code, errs)
				}
				local = out
			}
			serve(ctx, "worker", "--nats", s.ClientURL(), "--procs", "2", "--quiet")
			serve(ctx, "store", "--nats", s.ClientURL(), "--part", "0", "--quiet")
			ctx1, stop1 := context.WithCancel(ctx)
			serve(ctx1, "store", "--nats", s.ClientURL(), "--part", "1", "--quiet")
			// Store part 1 stops once it has merged two batches (its
			// consumer's ack floor). Its standby, started after its first
			// merge, takes the part over; or it starts again at once,
			// without its part.
			go func() {
				started := false
				for {
					select {
					case <-ctx.Done():
						return
					case <-time.After(20 * time.Millisecond):
					}
					n := mergedByPart1(s)
					if standby && !started && n >= 64 {
						serve(ctx, "store", "--nats", s.ClientURL(), "--part", "1", "--quiet")
						started = true
					}
					if n >= 128 {
						break
					}
				}
				stop1()
				if !standby {
					serve(ctx, "store", "--nats", s.ClientURL(), "--part", "1", "--quiet")
				}
			}()
			code, cl, errs := runCLI(context.Background(), "run", path, "--out", filepath.Join(dir, "cluster"), "--nats", s.ClientURL(), "--lag", "3", "--store-parts", "2", "--json")
			if code != exitOK || !strings.Contains(errs, "store part lost") || !strings.Contains(errs, "continuing from the last checkpoint") {
				t.Fatalf("exit %d, want 0 after taking the part over: %s", code, errs)
			}
			if a, b := summary(local), summary(cl); a != b {
				t.Fatalf("local %s\nwith store part 1 handed over %s", a, b)
			}
		})
	}
}

// cliCluster starts an embedded NATS server and writes the campaign src
// to c.yaml in a temporary directory (its path); serve runs a command
// that must exit 0 when its context ends, and ctx ends with the test.
func cliCluster(t *testing.T, src string) (s *server.Server, path string, ctx context.Context, serve func(ctx context.Context, args ...string)) {
	t.Helper()
	s = startNATS(t, 0)
	path = filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	serve = func(ctx context.Context, args ...string) {
		wg.Go(func() {
			if code, _, errs := runCLI(ctx, args...); code != exitOK {
				t.Errorf("%v: exit %d: %s", args, code, errs)
			}
		})
	}
	return s, path, ctx, serve
}

// mergedByPart1 is how many shares store part 1 has acked (merged).
func mergedByPart1(s *server.Server) uint64 {
	info, err := s.Jsz(&server.JSzOptions{Accounts: true, Streams: true, Consumer: true})
	if err != nil {
		return 0
	}
	var n uint64
	for _, a := range info.AccountDetails {
		for _, st := range a.Streams {
			for _, c := range st.Consumer {
				if c != nil && c.Name == "part-1" {
					n += c.AckFloor.Consumer
				}
			}
		}
	}
	return n
}

// startNATS starts an embedded JetStream server on a free port (maxPayload
// 0: the server's default), shut down when the test ends.
func startNATS(t *testing.T, maxPayload int32) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: t.TempDir(), NoLog: true, NoSigs: true, MaxPayload: maxPayload})
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

// A campaign file too large for one message of the NATS server is bad
// input: `run --nats` exits 2 naming its size and the limit.
func TestRunCampaignOverMaxPayload(t *testing.T) {
	s := startNATS(t, 2048)
	dir := t.TempDir()
	path := filepath.Join(dir, "c.yaml")
	src := "# " + strings.Repeat("x", 4096) + "\nccai: [reno]\nbytes: 200000\nbudget: 64\nwindow: 32\n"
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCLI(context.Background(), "run", path, "--out", filepath.Join(dir, "out"), "--nats", s.ClientURL(), "--quiet")
	if code != exitUsage || !strings.Contains(errs, fmt.Sprintf("campaign file %s: %d bytes", path, len(src))) || !strings.Contains(errs, "max_payload 2048") {
		t.Fatalf("exit %d, want 2 naming the campaign file's size and the server's max_payload: %s", code, errs)
	}
	t.Log(strings.TrimSpace(errs))
}

// The same campaign coordinated twice (here one --campaign-id, as two
// machines with one --out path would derive) is bad input: the second
// `run --nats` exits 2 naming the first, which goes on.
func TestRunCampaignCoordinatedTwice(t *testing.T) {
	s := startNATS(t, 0)
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("ccai: [reno]\nbytes: 200000\nbudget: 64\nwindow: 32\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := filepath.Join(t.TempDir(), "first")
	done := make(chan int, 1)
	go func() {
		// No worker host: it waits for results until cancelled.
		code, _, _ := runCLI(ctx, "run", path, "--nats", s.ClientURL(), "--campaign-id", "twice", "--out", first, "--quiet")
		done <- code
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(first, "campaign.yaml")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first coordinator did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
	code, _, errs := runCLI(context.Background(), "run", path, "--nats", s.ClientURL(), "--campaign-id", "twice", "--out", filepath.Join(t.TempDir(), "second"), "--quiet")
	if code != exitUsage || !strings.Contains(errs, "campaign twice is coordinated by ") || !strings.Contains(errs, "another --out or --campaign-id") {
		t.Errorf("a second coordinator of the campaign: exit %d: %s", code, errs)
	}
	select {
	case code := <-done:
		t.Fatalf("the first coordinator ended (exit %d) when the second was refused", code)
	default:
	}
	cancel()
	if code := <-done; code != exitInterrupted {
		t.Errorf("the first coordinator, interrupted: exit %d", code)
	}
}
