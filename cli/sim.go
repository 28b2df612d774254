package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/suggest"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// simSummary is the --json output of `actfuzz sim`.
type simSummary struct {
	CCA            string              `json:"cca"`
	Profile        string              `json:"profile"`
	Seed           uint64              `json:"seed"`
	Env            netenv.Env          `json:"env"`
	SACK           bool                `json:"sack"`
	SimTimeS       float64             `json:"sim_time_s"`
	WallS          float64             `json:"wall_s"`
	Events         uint64              `json:"events"`
	SegmentsSent   uint64              `json:"segments_sent"`
	Retransmits    uint64              `json:"retransmits"`
	Timeouts       uint64              `json:"timeouts"`
	Recoveries     uint64              `json:"recoveries"`
	Undos          uint64              `json:"undos"`
	DeliveredBytes uint64              `json:"delivered_bytes"`
	Capped         bool                `json:"capped"`
	CapReason      string              `json:"cap_reason,omitempty"`
	TraceSHA256    string              `json:"trace_sha256"`
	Final          netenv.FinalState   `json:"final"`
	Flows          []netenv.FlowResult `json:"flows,omitempty"`
}

// envFlags registers one flag per row of netenv's parameter table,
// setting e (whose values are the defaults shown).
func envFlags(fs *flag.FlagSet, e *netenv.Env) {
	for i := range netenv.NumParams {
		p := netenv.ParamAt(i)
		// The backquoted word is the value's name in --help.
		usage := p.Doc
		switch {
		case p.Kind == netenv.Categorical:
			usage += ": `" + strings.Join(p.Values, "|") + "`"
		case p.Unit != "":
			usage += " (`" + p.Unit + "`)"
		default:
			usage += " (a `number`)"
		}
		fs.Var(paramFlag{p, e}, p.Name, usage)
	}
}

// paramFlag is a flag.Value that parses and checks one parameter of P.
type paramFlag struct {
	p *netenv.Param
	e *netenv.Env
}

func (f paramFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.Format(f.e)
}

func (f paramFlag) Set(s string) error {
	v, err := f.p.Parse(s)
	if err != nil {
		return err
	}
	f.p.Set(f.e, v)
	return nil
}

// parseFlags parses args, turning every error into a message naming the
// flag and exit status 2.
// --help prints the flags and the exit statuses; an unknown flag gets a
// suggestion.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) (ok bool, code int) {
	var buf bytes.Buffer
	fs.SetOutput(&buf)
	cmd := strings.TrimPrefix(fs.Name(), "actfuzz ")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s%s\n\nflags:\n", fs.Name(), commandArgs(cmd))
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), exitHelp(cmd))
	}
	err := fs.Parse(args)
	if err == nil {
		return true, exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		_, _ = io.Copy(stderr, &buf)
		return false, exitOK
	}
	// The flag package names flags with one dash; the rest of actfuzz
	// (help, messages, README) writes two.
	msg := strings.Replace(err.Error(), " for flag -", " for flag --", 1)
	if name, found := strings.CutPrefix(msg, "flag provided but not defined: "); found {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
		name = "--" + strings.TrimLeft(name, "-")
		msg = "unknown flag " + name + suggest.DidYouMean(name, names)
	}
	fmt.Fprintf(stderr, "%s: %s (see actfuzz help %s)\n", fs.Name(), msg, cmd)
	return false, exitUsage
}

// commandArgs are the positional arguments of a command, for --help.
func commandArgs(cmd string) string {
	switch cmd {
	case "run", "compare":
		return " [CAMPAIGN.yaml] [flags]"
	case "replay", "minimize", "diff", "confirm":
		return " SEED.json [flags]"
	}
	return " [flags]"
}

// parseInterleaved parses flags that may come before or after the
// positional arguments (`actfuzz run FILE --budget 10`) and returns the
// positional ones.
func parseInterleaved(fs *flag.FlagSet, args []string, stderr io.Writer) (positional []string, ok bool, code int) {
	rest := args
	for {
		if ok, code := parseFlags(fs, rest, stderr); !ok {
			return nil, false, code
		}
		if fs.NArg() == 0 {
			return positional, true, 0
		}
		positional = append(positional, fs.Arg(0))
		rest = fs.Args()[1:]
	}
}

func runSim(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("actfuzz sim", flag.ContinueOnError)
	env := netenv.DefaultEnv()
	envFlags(fs, &env)
	cca := fs.String("cca", "cubic", "congestion control `NAME` (actfuzz list shows them)")
	bytes := fs.Uint64("bytes", netenv.DefaultBytes, "bytes to transfer")
	seed := fs.Uint64("seed", 1, "run seed e")
	sack := fs.Bool("sack", true, "enable SACK (false: NewReno recovery)")
	profile := fs.String("profile", "linux", "behaviour profile: linux or linux-3.10")
	handshake := fs.Bool("handshake", false, "open the connection with SYN and SYN-ACK first (native subject; ns-3 and gVisor always do)")
	tracePath := fs.String("trace", "", "write the state trace as CSV to `FILE.csv`")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	var traceFiles stringList
	fs.Var(&traceFiles, "link-trace-file", "a Mahimahi trace `FILE` of your own: the first is --link_trace user1, the next user2 … (up to 4; repeat the flag)")
	_ = addVerbosityFlags(fs)
	subject := fs.String("subject", "native", "what runs the simulation: native, ns3 (build it with make ns3), gvisor, linux (the running kernel, in network namespaces; root) or quic (quic-go, in real time)")
	if ok, code := parseFlags(fs, args, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "actfuzz sim: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	subj, ok := subjectFlag(*subject, "sim", stderr)
	if !ok {
		return exitUsage
	}
	defer closeSubject(subj)
	prof, err := ccai.ParseProfile(*profile)
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz sim: --profile: %v\n", err)
		return exitUsage
	}
	if err := checkCCA(subj, *cca); err != nil {
		fmt.Fprintf(stderr, "actfuzz sim: --cca: %v\n", err)
		return exitUsage
	}
	if !checkSimFlags(fs, subj, prof, stderr) {
		return exitUsage
	}
	if err := env.Validate(); err != nil {
		fmt.Fprintf(stderr, "actfuzz sim: --%v\n", err.Error()[len("parameter "):])
		return exitUsage
	}
	if *bytes == 0 {
		fmt.Fprintln(stderr, "actfuzz sim: --bytes must be > 0")
		return exitUsage
	}
	setup := netenv.Setup{CCAI: []string{*cca}, Bytes: *bytes, SACK: *sack, Profile: prof, Handshake: *handshake}
	if len(traceFiles) > netenv.MaxLinkTraceFiles {
		fmt.Fprintf(stderr, "actfuzz sim: --link-trace-file: %d files, at most %d\n", len(traceFiles), netenv.MaxLinkTraceFiles)
		return exitUsage
	}
	for _, p := range traceFiles {
		f, err := netenv.ReadLinkTraceFile(p)
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz sim: --link-trace-file: %v\n", err)
			return exitUsage
		}
		setup.LinkTraces = append(setup.LinkTraces, f)
	}
	cfg := setup.Config(*seed, netenv.Constant(env))
	cfg.HashTrace = true
	if err := checkConfig(subj, &cfg); err != nil {
		fmt.Fprintf(stderr, "actfuzz sim: %v\n", err)
		return exitUsage
	}
	var obs observe.Observer
	var trace *netenv.CSVTrace
	if *tracePath != "" {
		f, err := corpus.CreateFile(*tracePath)
		if err != nil {
			fmt.Fprintf(stderr, "actfuzz sim: --trace: %v\n", err)
			return exitInternal
		}
		defer f.Close()
		trace = netenv.NewCSVTrace(f, subj.Capabilities(), *cca)
		obs = trace
	}
	res, err := subj.Run(ctx, cfg, obs)
	if trace != nil {
		if ferr := trace.Flush(); ferr != nil && err == nil {
			err = fmt.Errorf("writing trace: %w", ferr)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "actfuzz sim: %v\n", err)
		var fault *netenv.Fault
		if errors.As(err, &fault) {
			return exitFound // the subject misbehaved: a finding
		}
		return exitInternal
	}
	f := res.Flows[0]
	sum := simSummary{
		CCA: *cca, Profile: prof.String(), Seed: *seed, Env: env, SACK: *sack,
		SimTimeS: res.SimTime.Seconds(), WallS: res.Wall.Seconds(), Events: res.Events,
		SegmentsSent: f.SegmentsSent, Retransmits: f.Retransmits, Timeouts: f.Timeouts,
		Recoveries: f.Recoveries, Undos: f.Undos,
		DeliveredBytes: f.DeliveredBytes, Capped: res.Capped, CapReason: res.CapReason,
		TraceSHA256: res.TraceSHA256, Final: f.Final,
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
		return 0
	}
	fmt.Fprintf(stdout, "%s (%s, sack=%v) over %.1f Mbit/s, %g ms, loss %g, buffer %d, seed %d\n",
		*cca, prof, *sack, env.BW, env.Delay, env.Loss, env.Buffer, *seed)
	fmt.Fprintf(stdout, "  delivered %d bytes in %.3f s simulated (%.2f ms wall, %d events)\n",
		f.DeliveredBytes, sum.SimTimeS, sum.WallS*1e3, res.Events)
	fmt.Fprintf(stdout, "  segments %d, retransmits %d, timeouts %d, recoveries %d, undos %d\n",
		f.SegmentsSent, f.Retransmits, f.Timeouts, f.Recoveries, f.Undos)
	fmt.Fprintf(stdout, "  final cwnd %d, ssthresh %d, srtt %.2f ms, rttvar %.2f ms, %s\n",
		f.Final.Cwnd, f.Final.SSThresh, f.Final.SRTTms, f.Final.RTTVarMs, f.Final.CAState)
	if res.Capped {
		fmt.Fprintf(stdout, "  capped: %s cap reached\n", res.CapReason)
	}
	fmt.Fprintf(stdout, "  trace sha256 %s\n", res.TraceSHA256)
	return 0
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }
