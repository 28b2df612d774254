package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/act/cluster"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/internal/shell"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/report"
	"github.com/actfuzz/actfuzz/triage"
)

// loadCampaign reads the campaign argument, or the embedded default, for
// the subject that will run it: what the campaign needs (congestion
// controls by the subject's names, topology, profile, parameters,
// variables of S and of the conditions) is checked against what the
// subject provides.
func loadCampaign(args []string, subj netenv.Subject, stderr io.Writer, cmd string) (*act.Campaign, bool) {
	if len(args) > 1 {
		fmt.Fprintf(stderr, "actfuzz %s: unexpected argument %q\n", cmd, args[1])
		return nil, false
	}
	if len(args) == 0 {
		c := act.DefaultCampaign()
		if err := c.CheckSubject(subj.Capabilities()); err != nil {
			fmt.Fprintf(stderr, "actfuzz %s: the default campaign: %v\n", cmd, err)
			return nil, false
		}
		return c, true
	}
	c, err := act.LoadCampaignFor(args[0], subj.Capabilities())
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: %v%s\n", cmd, err, otherSubjectHint(args[0], subj, err))
		return nil, false
	}
	return c, true
}

// otherSubjectHint names the subjects a campaign refused by subj would
// run on as it is (ccai: [TcpCubic] without --subject ns3), judged by
// their declared capabilities, without starting them.
func otherSubjectHint(path string, subj netenv.Subject, err error) string {
	if !errors.Is(err, act.ErrSubjectLacks) {
		return ""
	}
	var fits []string
	for _, caps := range declaredCapabilities() {
		if caps.Name == subj.Name() {
			continue
		}
		if _, err := act.LoadCampaignFor(path, caps); err == nil {
			fits = append(fits, "--subject "+caps.Name)
		}
	}
	if len(fits) == 0 {
		return ""
	}
	return "; it runs as it is with " + strings.Join(fits, " or ")
}

// restoreSettings takes a resumed run's method, budget, duration and
// workers from its checkpoint, unless given again as flags (which it
// says).
func restoreSettings(fs *flag.FlagSet, out string, method *string, budget *int, duration *time.Duration, workers, lag *int, info, stderr io.Writer) int {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["method"] {
		switch ms := act.CheckpointMethods(out); len(ms) {
		case 0:
			return exitOK // nothing to resume: a fresh start
		case 1:
			*method = ms[0]
		default:
			fmt.Fprintf(stderr, "actfuzz run: --out %s has checkpoints of %v: choose one with --method\n", out, ms)
			return exitUsage
		}
	}
	cp, err := act.ReadCheckpoint(out, *method)
	if errors.Is(err, os.ErrNotExist) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz run: %v\n", err)
		return exitInternal
	}
	fmt.Fprintf(info, "actfuzz run: resuming %s after %d simulations and %s\n", *method, cp.Sims, cp.Wall.Round(time.Second))
	restore := func(name, cur, saved string, set func()) {
		if cur == saved {
			return
		}
		if given[name] {
			fmt.Fprintf(info, "actfuzz run: --%s %s overrides the checkpoint's %s\n", name, cur, saved)
			return
		}
		set()
	}
	if cp.Budget > 0 {
		restore("budget", fmt.Sprint(*budget), fmt.Sprint(cp.Budget), func() { *budget = cp.Budget })
	}
	restore("duration", duration.String(), cp.Duration.String(), func() { *duration = cp.Duration })
	if cp.Workers > 0 {
		restore("workers", fmt.Sprint(*workers), fmt.Sprint(cp.Workers), func() { *workers = cp.Workers })
	}
	if !given["lag"] {
		*lag = cp.Lag
	} else if *lag != cp.Lag {
		fmt.Fprintf(info, "actfuzz run: --lag %d overrides the checkpoint's %d (results differ from an uninterrupted run's)\n", *lag, cp.Lag)
	}
	return exitOK
}

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz run", flag.ContinueOnError)
	method := fs.String("method", "act", "selection method: act, ran or man")
	budget := fs.Int("budget", 0, "simulations to run (0: the campaign's budget)")
	duration := fs.Duration("duration", 0, "wall-clock limit, e.g. 8h (0: none)")
	workers := fs.Int("workers", 0, "parallel simulations (0: GOMAXPROCS)")
	out := fs.String("out", "", "output directory for findings, coverage and status (default: out/<campaign>-<UTC time>); one that holds another campaign is refused unless --resume")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	verbosity := addVerbosityFlags(fs)
	resume := fs.Bool("resume", false, "continue the campaign checkpointed in --out, with its --method, --budget, --duration and --workers unless given again (wall time and --duration count over every resume); without CAMPAIGN.yaml, the one in --out")
	subject := fs.String("subject", "native", "what runs the simulations: "+suggest.OrList(netenv.SubjectNames()))
	memory := fs.String("memory", "", "memory budget of the campaign process, e.g. 2GB (default: the campaign's memory:, else 2GB)")
	isoFlags := addIsolateFlags(fs, false)
	nf := addNATSFlags(fs, "coordinate a cluster: publish the simulations on this NATS JetStream `URL` (nats://host:4222, tls://host:4222) for `actfuzz worker --nats URL` hosts; default: run them here")
	lag := fs.Int("lag", 0, "batches of 64 configurations chosen ahead of the merge; results depend on it (0: the checkpoint's when resuming, else 2, or 8 with --nats)")
	storeParts := fs.Int("store-parts", 0, "with --nats: split the coverage store into `N` parts (1 to 16) kept by `actfuzz store --nats URL --part J` processes, J = 0…N-1, so that the coordinator does not merge every visit; results do not depend on it (0: the coordinator keeps the whole store)")
	campaignID := fs.String("campaign-id", "", "with --nats: the id that names the campaign's streams (default: derived from --out, the campaign file and --method)")
	doTriage := fs.Bool("triage", false, "after the campaign, triage its findings as `actfuzz triage DIR` does (minimizing and replaying each group on every subject that has its CCA: it can take as long as the campaign, so it is off by default)")
	cpuProfile := fs.String("cpuprofile", "", "write this process's CPU profile (go tool pprof) to `FILE`: what a coordinator costs per simulation")
	positional, ok, code := parseInterleaved(fs, args, stderr)
	if !ok {
		return code
	}
	stopProfile, ok := startCPUProfile("run", *cpuProfile, stderr)
	if !ok {
		return exitUsage
	}
	defer stopProfile()
	quiet := verbosity.quiet
	mem, ok := memoryFlag(*memory, stderr, "run")
	if !ok {
		return exitUsage
	}
	iso, ok := isoFlags.options("run", stderr)
	if !ok {
		return exitUsage
	}
	if !checkRunRanges(*method, *budget, *workers, *duration, *lag, stderr) {
		return exitUsage
	}
	if !checkRunClusterFlags(nf, *campaignID, *storeParts, stderr) {
		return exitUsage
	}
	if *resume && *out == "" {
		fmt.Fprintln(stderr, "actfuzz run: --resume needs --out DIR")
		return exitUsage
	}
	if *resume && len(positional) == 0 {
		// The campaign of the directory being resumed.
		if _, err := os.Stat(filepath.Join(*out, "campaign.yaml")); err == nil {
			positional = []string{filepath.Join(*out, "campaign.yaml")}
		}
	}
	if *resume {
		code := restoreSettings(fs, *out, method, budget, duration, workers, lag, infoWriter(*quiet, stderr), stderr)
		if code != exitOK {
			return code
		}
	}
	subj, ok := subjectFlag(*subject, "run", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(subj)
	if *nf.url != "" && !subj.Capabilities().Deterministic {
		// The coordinator takes a host's finding only once its own
		// replay shows it (act's verifier): a subject that does not
		// repeat itself cannot be checked so.
		fmt.Fprintf(stderr, "actfuzz run: --nats: the %s subject's runs do not repeat bit for bit, so the coordinator could not check a host's finding by replaying it; run this campaign without --nats\n", subj.Name())
		return exitUsage
	}
	c, ok := loadCampaign(positional, subj, stderr, "run")
	if !ok {
		return exitUsage
	}
	if err := checkCampaignSubject(c, subj); err != nil {
		fmt.Fprintf(stderr, "actfuzz run: --subject %s: %v\n", subj.Name(), err)
		return exitUsage
	}
	if *out == "" {
		*out = defaultOut(c, time.Now())
	}
	unlock, code := lockOut("run", *out, infoWriter(*quiet, stderr), stderr)
	if code != exitOK {
		return code
	}
	defer unlock()
	if code := checkOut("run", *out, c, *resume, stderr); code != exitOK {
		return code
	}
	if !*quiet {
		fmt.Fprintf(stderr, "actfuzz run: output in %s\n", *out)
		printOracles(stderr, c)
	}
	prog := commandName()
	opt := act.Options{Method: *method, Budget: *budget, Duration: *duration, Workers: *workers, Out: *out,
		Resume: *resume, Subject: subj, Memory: mem, Isolate: *isoFlags.isolate, IsolateOptions: iso,
		Logger: verbosity.logger(stderr), Program: prog, Lag: *lag, StoreParts: *storeParts}
	opt.OnCheckpoint = reportHook(*out, c, prog, opt.Logger)
	resumeCmd := runResumeCommand(prog, *out, subj.Name(), nf, *campaignID)
	if *nf.url != "" {
		if opt.Lag == 0 {
			opt.Lag = clusterLag
		}
		disconnect, code := clusterRun(nf, *campaignID, c, &opt, stderr, infoWriter(*quiet, stderr))
		if code != exitOK {
			return code
		}
		defer disconnect()
	}
	pr := newProgress(stderr)
	if !*quiet && !*asJSON {
		opt.Progress = pr.update
		opt.OnFinding = firstHits(pr, prog)
	}
	if *storeParts == 0 || c.GivenMemory(mem) > 0 {
		// With store parts a budget given caps the index at the store's
		// share (act.ErrIndexCapped), below the soft limit. Without one
		// the index is not capped, and a soft limit below it would keep
		// the garbage collector running (bench/cluster-aged.sh 2,
		// simulations 10,000 to 15,000: 109 collections with the
		// limit, 24 without).
		setMemoryLimit(ctx, c, mem, opt.Logger)
	}
	rep, err := runRecovering(ctx, c, &opt, infoWriter(*quiet, stderr))
	pr.done()
	if err != nil {
		return runErrorCode(err, rep, *out, resumeCmd, stderr)
	}
	if ctx.Err() != nil && *out != "" {
		fmt.Fprintf(stderr, "interrupted after %d simulations; continue with: %s\n", rep.Sims, resumeCmd())
	}
	if ctx.Err() == nil && *duration > 0 {
		reportDurationCap(stderr, rep, c, *budget, *duration, *out)
	}
	if *asJSON {
		writeJSONReport(stdout, rep)
	} else {
		printRunReport(stdout, rep, c, *out, prog)
	}
	if *doTriage && ctx.Err() == nil && len(rep.Findings) > 0 {
		topt := triage.Options{Runs: 20, Watchdog: iso.Watchdog, Open: openSubject, Log: opt.Logger}
		if code := triageDir(ctx, *out, topt, false, stderr, stderr); code == exitUsage || code == exitInternal {
			return code
		}
	}
	return findingsExitCode(rep)
}

// startCPUProfile profiles the process's CPU into path (none when "")
// until stop; a file it cannot make is reported as cmd's --cpuprofile.
func startCPUProfile(cmd, path string, stderr io.Writer) (stop func(), ok bool) {
	if path == "" {
		return func() {}, true
	}
	f, err := os.Create(path)
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: --cpuprofile: %v\n", cmd, err)
		return nil, false
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, true
}

// printFindings is the run's summary of its findings: the conditions
// hit, the groups (one a root cause), and the act.TopGroups most
// important with the one command that replays each; findings.md (and
// the report, printed after it) have the rest.
func printFindings(w io.Writer, rep *act.Report, out, prog string) {
	if len(rep.Findings) == 0 {
		fmt.Fprintln(w, "no findings")
		return
	}
	conds := map[string]bool{}
	hits := 0
	for _, g := range rep.Findings {
		conds[g.Title()] = true
		hits += g.Count
	}
	ranked := rep.Ranked()
	top := ranked[:min(len(ranked), act.TopGroups)]
	fmt.Fprintf(w, "findings: %s hit, %s (one a root cause), %s; most important first:\n",
		act.Plural(len(conds), "condition"), act.Plural(len(ranked), "group"), act.Plural(hits, "hit"))
	for i, g := range top {
		fmt.Fprintf(w, "  %d. %s ×%d: flow %d: %s\n", i+1, g.Title(), g.Count, g.Seed.Finding.Flow, g.RootCause())
		if g.Path != "" {
			fmt.Fprintf(w, "     %s replay %s\n", prog, shell.Quote(g.Path))
		}
	}
	switch rest := len(ranked) - len(top); {
	case out != "" && rest > 0:
		fmt.Fprintf(w, "%s more, and every group's commands: %s\n", act.Plural(rest, "group"), filepath.Join(out, "findings.md"))
	case out != "":
		fmt.Fprintf(w, "every group's commands: %s\n", filepath.Join(out, "findings.md"))
	case rest > 0:
		fmt.Fprintf(w, "%s more (--out keeps them)\n", act.Plural(rest, "group"))
	}
}

// maxPartRecoveries bounds how many times one `run` continues from its
// checkpoint after losing a store part (a crash loop stops it).
const maxPartRecoveries = 10

// runRecovering is act.Run, continued from the last checkpoint (in a new
// Executor) when a store part is lost: a store process that died and
// was restarted, by hand or by a supervisor, takes its part over without
// the coordinator stopping (the part is loaded again from the
// checkpoint, and what was merged after it runs again: the results are
// those of an uninterrupted run). Without a checkpoint yet, the campaign
// starts again. opt is a pointer because the Executor's constructor
// (clusterRun) reads its Resume.
func runRecovering(ctx context.Context, c *act.Campaign, opt *act.Options, info io.Writer) (*act.Report, error) {
	start := time.Now()
	rep, err := act.Run(ctx, c, *opt)
	for tries := 1; errors.Is(err, cluster.ErrPartLost) && ctx.Err() == nil && opt.Out != ""; tries++ {
		if tries > maxPartRecoveries {
			return rep, fmt.Errorf("%w (%d times in this run; continue with --resume)", err, maxPartRecoveries)
		}
		if opt.Duration > 0 {
			if opt.Duration -= time.Since(start); opt.Duration <= 0 {
				return rep, err
			}
			start = time.Now()
		}
		opt.Resume = slices.Contains(act.CheckpointMethods(opt.Out), cmp.Or(opt.Method, "act"))
		fmt.Fprintf(info, "actfuzz run: %v\nactfuzz run: continuing from the last checkpoint once a store process serves the part (%d of %d)\n",
			err, tries, maxPartRecoveries)
		rep, err = act.Run(ctx, c, *opt)
	}
	return rep, err
}

// printStore says how the store kept to its memory budget.
func printStore(w io.Writer, st *coverage.Store) {
	fmt.Fprintf(w, "store: %.1f MB of a %.1f MB budget; regions exact from k=%d, pools at k=%d", float64(st.Bytes())/1e6,
		float64(st.Options().Memory)/1e6, st.FloorK(), st.PoolK())
	if st.FloorK() > 1 {
		fmt.Fprintf(w, " (k<%d estimated)", st.FloorK())
	}
	if st.OverBudget() {
		fmt.Fprint(w, "; OVER BUDGET: nothing left to coarsen")
	}
	fmt.Fprintln(w)
}

// memoryFlag parses --memory; "" is 0 (the campaign's budget).
func memoryFlag(v string, stderr io.Writer, cmd string) (int64, bool) {
	if v == "" {
		return 0, true
	}
	m, err := act.ParseBytes(v)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz %s: --memory: %v\n", cmd, err)
		return 0, false
	}
	return m, true
}

// printSteps shows which step first reached the regions (ACT §4.2).
func printSteps(w io.Writer, rep *act.Report) {
	ks := rep.Store.Space().Ks()
	idx := func(k int) int {
		for i, x := range ks {
			if x == k {
				return i
			}
		}
		return -1
	}
	for _, st := range act.ReportSteps {
		n, ok := rep.StepSims[st]
		if !ok {
			continue
		}
		unit := "sims"
		if st == act.StepSymbolic {
			unit = "sim-equivalents"
		}
		fmt.Fprintf(w, "step %-13s %7d %s", st, n, unit)
		if found := rep.StepRegions[st]; found != nil {
			for _, k := range []int{1, 16, 128} {
				if i := idx(k); i >= 0 {
					fmt.Fprintf(w, "  new k=%d: %d", k, found[i])
				}
			}
		}
		fmt.Fprintln(w)
	}
	if rep.Symbolic != nil {
		fmt.Fprintf(w, "symbolic step: %v\n", rep.Symbolic)
	}
}

// checkRunRanges checks run's --method and the ranges of its numeric
// flags, reporting the first out of range on stderr.
func checkRunRanges(method string, budget, workers int, duration time.Duration, lag int, stderr io.Writer) bool {
	switch method {
	case "act", "ran", "man":
	default:
		fmt.Fprintf(stderr, "actfuzz run: --method %q: want act, ran or man\n", method)
		return false
	}
	if budget < 0 || workers < 0 || duration < 0 {
		fmt.Fprintln(stderr, "actfuzz run: --budget, --workers and --duration must be ≥ 0")
		return false
	}
	if lag < 0 || lag > 1024 {
		fmt.Fprintln(stderr, "actfuzz run: --lag must be between 0 and 1024")
		return false
	}
	return true
}

// runErrorCode reports a campaign's error on stderr and is the exit code
// it gives: a usage error (a changed campaign, a subject that lacks what
// it needs, a header over the server's payload, a campaign id held by
// another coordinator) exits 2; a cap hit, with how to continue, or any
// other error exits 3.
func runErrorCode(err error, rep *act.Report, out string, resumeCmd func(extra ...string) string, stderr io.Writer) int {
	if errors.Is(err, act.ErrCampaignChanged) || errors.Is(err, act.ErrSubjectLacks) || errors.Is(err, cluster.ErrHeaderTooLarge) {
		// ErrHeaderTooLarge: a campaign file over the NATS server's
		// max_payload (the message names its size and the limit).
		fmt.Fprintf(stderr, "actfuzz run: %v\n", err)
		return exitUsage
	}
	if errors.Is(err, cluster.ErrCampaignHeld) {
		// The id comes from --out (or --campaign-id): the same command
		// started twice, on two machines or twice on one.
		fmt.Fprintf(stderr, "actfuzz run: --nats: %v; stop that coordinator, or give this one another --out or --campaign-id\n", err)
		return exitUsage
	}
	if errors.Is(err, act.ErrIndexCapped) && out != "" {
		fmt.Fprintf(stderr, "actfuzz run: %v\ncheckpoint written after %d simulations; with a larger budget, continue with: %s\n",
			err, rep.Sims, resumeCmd("--memory", "SIZE"))
		return exitInternal
	}
	if errors.Is(err, act.ErrStoreCapped) && out != "" {
		fmt.Fprintf(stderr, "actfuzz run: %v\ncheckpoint written after %d simulations; with more store parts or a larger cap, continue with: %s\n",
			err, rep.Sims, resumeCmd())
		return exitInternal
	}
	fmt.Fprintf(stderr, "actfuzz run: %v\n", err)
	return exitInternal
}

// reportDurationCap says on stderr when --duration ended a campaign before
// its budget: the budget, not the clock, says when a campaign is done, so
// a duration that ends it first is a cap.
func reportDurationCap(stderr io.Writer, rep *act.Report, c *act.Campaign, budget int, duration time.Duration, out string) {
	spent, of := rep.Sims+rep.StepSims[act.StepSymbolic], cmp.Or(budget, c.Budget)
	if spent >= of {
		return
	}
	fmt.Fprintf(stderr, "capped: --duration %v ended the campaign after %d of its %d simulations", duration, spent, of)
	if out != "" {
		fmt.Fprintf(stderr, "; continue with: %s run %s --resume --out %s", progName(), c.Path, out)
	}
	fmt.Fprintln(stderr)
}

// printRunReport prints a finished campaign's text report: its rate, its
// coverage and store, every cap hit and result rejected, its steps and
// findings, and where its HTML report is.
func printRunReport(stdout io.Writer, rep *act.Report, c *act.Campaign, out, prog string) {
	snap := rep.Store.Snapshot(rep.Method, int64(rep.Sims))
	fmt.Fprintf(stdout, "%s on %s: %d simulations in %.1f s (%.0f sims/s)\n", rep.Method, strings.Join(c.CCAI, "+"), rep.Sims, rep.Wall.Seconds(), float64(rep.Sims)/rep.Wall.Seconds())
	_ = coverage.WriteTable(stdout, snap)
	printStore(stdout, rep.Store)
	if rep.NoneInS() && rep.Sims > 0 {
		fmt.Fprintln(stdout, "coverage is zero: no state landed inside S (each was outside a range of the campaign's state:); widen S or narrow P")
	}
	if rep.PhasesCapped > 0 {
		fmt.Fprintf(stdout, "capped: %d schedules were not extended, at %d phases (max_phases)\n", rep.PhasesCapped, netenv.MaxPhases)
	}
	if rep.Unreproduced > 0 {
		fmt.Fprintf(stdout, "rejected: %d results from the cluster's hosts whose findings did not reproduce here (replaced by this coordinator's own run; -v logs them)\n", rep.Unreproduced)
	}
	if rep.StatesDropped > 0 {
		fmt.Fprintf(stdout, "capped: the states of %d simulations were not merged (their results were over the cluster's max_result)\n", rep.StatesDropped)
	}
	printSteps(stdout, rep)
	printFindings(stdout, rep, out, prog)
	fmt.Fprintf(stdout, "report: %s\n", filepath.Join(out, report.Dir, "index.html"))
}

// findingsExitCode is run's exit code for a finished campaign: 1 when it
// found a condition hit, like a failing test, else 0.
func findingsExitCode(rep *act.Report) int {
	for _, f := range rep.Findings {
		if f.Seed.Finding.Kind == "condition" {
			return 1
		}
	}
	return 0
}

// checkRunClusterFlags checks the flags that only a cluster run takes:
// they need --nats, and --store-parts is between 0 and 16.
func checkRunClusterFlags(nf *natsFlags, campaignID string, storeParts int, stderr io.Writer) bool {
	if *nf.url == "" && (campaignID != "" || storeParts != 0 || *nf.creds != "" || *nf.ca != "" || *nf.cert != "" || *nf.key != "") {
		fmt.Fprintln(stderr, "actfuzz run: --campaign-id, --store-parts and --nats-creds, --nats-ca, --nats-cert, --nats-key need --nats URL")
		return false
	}
	if storeParts < 0 || storeParts > 16 {
		fmt.Fprintln(stderr, "actfuzz run: --store-parts must be between 0 and 16")
		return false
	}
	return true
}

// runResumeCommand is the command that resumes this run, with extra flags:
// the cluster's flags again (the store parts, the method and the rest come
// from the checkpoint).
func runResumeCommand(prog, out, subject string, nf *natsFlags, campaignID string) func(extra ...string) string {
	resumeFlags := nf.given()
	if campaignID != "" {
		resumeFlags = append(resumeFlags, "--campaign-id", shell.Quote(campaignID))
	}
	return func(extra ...string) string {
		return resumeCommand(prog, out, subject, append(resumeFlags, extra...)...)
	}
}
