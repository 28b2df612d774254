package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/act/cluster"
	"github.com/actfuzz/actfuzz/internal/shell"
	"github.com/actfuzz/actfuzz/internal/suggest"
)

// natsFlags are the NATS connection flags of run and worker.
type natsFlags struct {
	url, creds, ca, cert, key *string
}

// given are the flags as given, to repeat in a printed command (a
// resume): the URL without its password (cluster.Redact; give it again),
// the files by their paths.
func (f *natsFlags) given() []string {
	var args []string
	for _, fl := range []struct{ name, value string }{{"nats", cluster.Redact(*f.url)}, {"nats-creds", *f.creds},
		{"nats-ca", *f.ca}, {"nats-cert", *f.cert}, {"nats-key", *f.key}} {
		if fl.value != "" {
			args = append(args, "--"+fl.name, shell.Quote(fl.value))
		}
	}
	return args
}

func addNATSFlags(fs *flag.FlagSet, role string) *natsFlags {
	return &natsFlags{
		url:   fs.String("nats", "", role),
		creds: fs.String("nats-creds", "", "NATS credentials `FILE` (JWT and NKey seed); never printed"),
		ca:    fs.String("nats-ca", "", "PEM `FILE` of the CAs that sign the NATS server's TLS certificate (for tls:// URLs)"),
		cert:  fs.String("nats-cert", "", "client certificate PEM `FILE` for mutual TLS (with --nats-key)"),
		key:   fs.String("nats-key", "", "client key PEM `FILE` for mutual TLS (with --nats-cert)"),
	}
}

// options validates the flags (bad input names the flag; a secret is
// never printed).
func (f *natsFlags) options(cmd, name string, stderr io.Writer) (cluster.ConnectOptions, bool) {
	o := cluster.ConnectOptions{URL: *f.url, Creds: *f.creds, CA: *f.ca, Cert: *f.cert, Key: *f.key, Name: name}
	for _, u := range strings.Split(o.URL, ",") {
		p, err := url.Parse(strings.TrimSpace(u))
		if err != nil || p.Host == "" || !slices.Contains([]string{"nats", "tls", "ws", "wss"}, p.Scheme) {
			fmt.Fprintf(stderr, "actfuzz %s: --nats %q: want a URL such as nats://host:4222 or tls://host:4222\n", cmd, cluster.Redact(strings.TrimSpace(u)))
			return o, false
		}
	}
	for _, fl := range []struct{ name, path string }{{"nats-creds", o.Creds}, {"nats-ca", o.CA}, {"nats-cert", o.Cert}, {"nats-key", o.Key}} {
		if fl.path == "" {
			continue
		}
		if _, err := os.Stat(fl.path); err != nil {
			fmt.Fprintf(stderr, "actfuzz %s: --%s %s: %v\n", cmd, fl.name, fl.path, err)
			return o, false
		}
	}
	if (o.Cert == "") != (o.Key == "") {
		fmt.Fprintf(stderr, "actfuzz %s: --nats-cert and --nats-key go together\n", cmd)
		return o, false
	}
	return o, true
}

// clusterLag is the lag of a cluster run without --lag: more batches in
// flight than on one machine keep the worker hosts busy.
const clusterLag = 8

// clusterRun makes run's executor a cluster coordinator: it connects and
// sets opt.Executor. The returned function disconnects.
func clusterRun(f *natsFlags, id string, c *act.Campaign, opt *act.Options, stderr, info io.Writer) (func(), int) {
	co, ok := f.options("run", "actfuzz coordinator", stderr)
	if !ok {
		return nil, exitUsage
	}
	co.Logger = opt.Logger
	if id == "" {
		abs, err := filepath.Abs(opt.Out)
		if err != nil {
			abs = opt.Out
		}
		id = cluster.CampaignID(abs, c.Source, opt.Method)
	} else if err := cluster.ValidID(id); err != nil {
		fmt.Fprintf(stderr, "actfuzz run: --campaign-id: %v\n", err)
		return nil, exitUsage
	}
	nc, err := cluster.Connect(co)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz run: --nats: %v\n", err)
		return nil, exitInternal
	}
	fmt.Fprintf(info, "actfuzz run: coordinator of campaign %s on %s (lag %d batches); start worker hosts with: %s worker --nats %s --procs N\n",
		id, cluster.Redact(co.URL), opt.Lag, progName(), cluster.Redact(co.URL))
	if opt.StoreParts > 0 {
		fmt.Fprintf(info, "actfuzz run: the coverage store is in %d parts; start a store process for each J = 0…%d with: %s store --nats %s --part J\n",
			opt.StoreParts, opt.StoreParts-1, progName(), cluster.Redact(co.URL))
	}
	opt.Executor = func(ctx context.Context, h act.CampaignHeader) (act.Executor, error) {
		return cluster.NewExecutor(ctx, nc, c, h, cluster.Options{ID: id, Resume: opt.Resume, Logger: opt.Logger, Parts: opt.StoreParts,
			Memory: c.GivenMemory(opt.Memory)})
	}
	return nc.Close, exitOK
}

// runClusterWorker is `actfuzz worker --nats URL`: a worker host.
func runClusterWorker(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := addNATSFlags(fs, "NATS `URL` of the campaigns to serve (nats://host:4222, tls://host:4222, or a comma-separated list)")
	procs := fs.Int("procs", 1, "worker processes on this host")
	subject := fs.String("subject", "", "serve only campaigns of this subject: "+suggest.OrList(clusterSubjects())+" (default: any; linux and quic run in real time and are not distributed)")
	campaign := fs.String("campaign", "", "serve only the campaign of this id (default: every campaign accepted, at once, sharing --procs)")
	verbosity := addVerbosityFlags(fs)
	memory := fs.String("worker-memory", "1G", "memory limit of a worker process: bytes, or with a K, M or G suffix")
	watchdog := fs.Duration("watchdog", 0, "time after which a simulation counts as hung, in the worker's unstarved time (wall time less its waits for a CPU); 0: 60 s or 50× the median simulation time, whichever is larger, and at least a minute past what a run of the subject may take by design (quic: 4 min)")
	cpuProfile := fs.String("cpuprofile", "", "write the host process's CPU profile (go tool pprof) to `FILE` (not its worker processes')")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: actfuzz worker --nats URL [--procs N] [--subject %s] [flags]\n\n"+
			"A worker host: it pulls the configurations of the campaigns coordinated on URL (actfuzz run --nats URL)\n"+
			"and runs them in N supervised worker processes. Without --nats, `actfuzz worker` is such a worker\n"+
			"process, started by run and compare (not by hand).\n\nflags:\n", strings.Join(clusterSubjects(), "|"))
		fs.PrintDefaults()
		fmt.Fprint(stderr, "\nflags of a worker process (without --nats):\n  -memory-limit BYTES\n    \tmemory limit; over it the worker exits with status 86 (default 1G)\n")
		fmt.Fprint(stderr, exitHelp("worker"))
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "actfuzz worker: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *procs < 1 {
		fmt.Fprintln(stderr, "actfuzz worker: --procs must be ≥ 1")
		return exitUsage
	}
	if *subject != "" && !slices.Contains(clusterSubjects(), *subject) {
		fmt.Fprintf(stderr, "actfuzz worker: --subject %q: want %s (a cluster runs only subjects whose runs repeat bit for bit)\n", *subject, suggest.OrList(clusterSubjects()))
		return exitUsage
	}
	if *campaign != "" {
		if err := cluster.ValidID(*campaign); err != nil {
			fmt.Fprintf(stderr, "actfuzz worker: --campaign: %v\n", err)
			return exitUsage
		}
	}
	stopProfile, ok := startCPUProfile("worker", *cpuProfile, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfile()
	iso, ok := (&isolateFlags{watchdog: watchdog, memory: memory}).options("worker", stderr)
	if !ok {
		return exitUsage
	}
	host, _ := os.Hostname()
	co, ok := nf.options("worker", "actfuzz worker host "+host, stderr)
	if !ok {
		return exitUsage
	}
	co.Logger = verbosity.logger(stderr)
	nc, err := cluster.Connect(co)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz worker: --nats: %v\n", err)
		return exitInternal
	}
	defer nc.Close()
	log := verbosity.logger(stderr)
	w, err := cluster.NewWorker(nc, cluster.WorkerOptions{Procs: *procs, Subject: *subject, Campaign: *campaign,
		Isolate: iso, Logger: log, Poll: time.Second})
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz worker: %v\n", err)
		return exitInternal
	}
	if !*verbosity.quiet {
		fmt.Fprintf(stderr, "actfuzz worker: serving campaigns on %s with %d worker processes (Ctrl-C to leave)\n", cluster.Redact(co.URL), *procs)
	}
	err = w.Serve(ctx)
	st := w.Stats()
	if !*verbosity.quiet {
		rejected := 0
		for _, n := range st.Rejected {
			rejected += n
		}
		fmt.Fprintf(stderr, "actfuzz worker: %d chunks, %d results; %d work messages rejected; %d chunks delivered again (a host died, or a delivery was lost)\n",
			st.Chunks, st.Results, rejected, st.Redelivered)
		if st.Dropped > 0 {
			fmt.Fprintf(stderr, "actfuzz worker: capped: %d results sent without their states (over the coordinator's max_result)\n", st.Dropped)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz worker: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// runStore is `actfuzz store --nats URL --part J`: a store process.
func runStore(ctx context.Context, args []string, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz store", flag.ContinueOnError)
	fs.SetOutput(stderr)
	nf := addNATSFlags(fs, "NATS `URL` of the campaigns to serve (nats://host:4222, tls://host:4222, or a comma-separated list)")
	part := fs.Int("part", -1, "the store part `J` to keep (0 to 15), of every campaign run with --store-parts above J")
	campaign := fs.String("campaign", "", "serve only the campaign of this id (default: every campaign with a part J)")
	verbosity := addVerbosityFlags(fs)
	cpuProfile := fs.String("cpuprofile", "", "write this process's CPU profile (go tool pprof) to `FILE`")
	memory := fs.String("memory", "", "cap each part kept at `SIZE`, e.g. 8GB: the merge that takes it over is its last, and the coordinator\n"+
		"ends the campaign after that batch, with a checkpoint, to be resumed with more --store-parts (default: no cap)")
	lease := fs.Duration("lease", cluster.DefaultLease, "a part's holder renews its lease every `DURATION`/4; a second process for the same part waits\n"+
		"as a standby and takes the part over once the lease has gone unrenewed this long (the holder was killed)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: actfuzz store --nats URL --part J [flags]\n\n"+
			"A store process: it keeps part J of the coverage store of the campaigns coordinated on URL with\n"+
			"actfuzz run --nats URL --store-parts N (N > J): the visit counts and pools of its share of the\n"+
			"states, merged from the worker hosts' results, so that the coordinator merges only new states.\n"+
			"Start one per part; results do not depend on where the parts are kept. A second process started\n"+
			"for the same part is a standby: it takes the part over when the first stops or is killed\n"+
			"(after --lease), and the coordinator continues from its last checkpoint.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, exitHelp("store"))
	}
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return exitOK
		}
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "actfuzz store: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *part < 0 || *part > 15 {
		fmt.Fprintln(stderr, "actfuzz store: --part J is needed, 0 to 15")
		return exitUsage
	}
	var memCap int64
	if *memory != "" {
		var err error
		if memCap, err = act.ParseBytes(*memory); err != nil || memCap <= 0 {
			fmt.Fprintf(stderr, "actfuzz store: --memory %q: want a size such as 8GB\n", *memory)
			return exitUsage
		}
	}
	if *lease < 100*time.Millisecond {
		fmt.Fprintf(stderr, "actfuzz store: --lease %v: want at least 100ms\n", *lease)
		return exitUsage
	}
	if *nf.url == "" {
		fmt.Fprintln(stderr, "actfuzz store: --nats URL is needed")
		return exitUsage
	}
	if *campaign != "" {
		if err := cluster.ValidID(*campaign); err != nil {
			fmt.Fprintf(stderr, "actfuzz store: --campaign: %v\n", err)
			return exitUsage
		}
	}
	// Once every flag is checked: a bad one leaves no profile file.
	stopProfile, ok := startCPUProfile("store", *cpuProfile, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfile()
	host, _ := os.Hostname()
	co, ok := nf.options("store", fmt.Sprintf("actfuzz store part %d %s", *part, host), stderr)
	if !ok {
		return exitUsage
	}
	co.Logger = verbosity.logger(stderr)
	nc, err := cluster.Connect(co)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz store: --nats: %v\n", err)
		return exitInternal
	}
	defer nc.Close()
	s, err := cluster.NewStore(nc, cluster.StoreOptions{Part: *part, Campaign: *campaign, Memory: memCap, Lease: *lease, Logger: verbosity.logger(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz store: %v\n", err)
		return exitInternal
	}
	if !*verbosity.quiet {
		fmt.Fprintf(stderr, "actfuzz store: keeping store part %d of the campaigns on %s (Ctrl-C to leave)\n", *part, cluster.Redact(co.URL))
	}
	err = s.Serve(ctx)
	if !*verbosity.quiet {
		st := s.Stats()
		rejected := 0
		for _, n := range st.Rejected {
			rejected += n
		}
		fmt.Fprintf(stderr, "actfuzz store: %d merges of %d shares; %d stale, %d rejected; %d parts taken over, %d leases lost\n",
			st.Merges, st.Shares, st.Stale, rejected, st.TakenOver, st.LeasesLost)
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz store: %v\n", err)
		return exitInternal
	}
	return exitOK
}

// natsArg says whether worker's arguments ask for a worker host.
func natsArg(args []string) bool {
	for _, a := range args {
		n := strings.TrimLeft(a, "-")
		if len(a) > len(n) && (n == "nats" || strings.HasPrefix(n, "nats=")) {
			return true
		}
	}
	return false
}
