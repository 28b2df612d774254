package cli

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
)

// statusWidth is the most a status line takes: it fits 80 columns.
const statusWidth = 79

// progress prints a campaign's status: on a terminal one line rewritten in
// place after every batch; elsewhere (a file, a pipe) a plain line every
// `every`.
type progress struct {
	w     io.Writer
	tty   bool
	every time.Duration
	last  time.Time
	shown bool // a line is on a terminal without its newline
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, tty: isTerminal(w), every: 10 * time.Second}
}

// isTerminal says whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (p *progress) update(st act.Status) {
	if p.tty {
		fmt.Fprintf(p.w, "\r%-*s", statusWidth, statusText(st))
		p.shown = true
		return
	}
	if now := time.Now(); p.last.IsZero() || now.Sub(p.last) >= p.every {
		p.last = now
		fmt.Fprintln(p.w, statusText(st))
	}
}

// note prints a line of its own: on a terminal over the status line,
// which the next update draws again below it.
func (p *progress) note(line string) {
	if p.shown {
		fmt.Fprintf(p.w, "\r%-*s\r", statusWidth, "")
		p.shown = false
	}
	fmt.Fprintln(p.w, line)
}

// firstHits says, once per condition or oracle (and once per kind of
// fault), where its first finding is and what it checks: the terminal's
// grouping of findings by oracle; the status line counts the rest.
func firstHits(p *progress, prog string) func(*act.FindingGroup) {
	seen := map[string]bool{}
	return func(g *act.FindingGroup) {
		f := g.Seed.Finding
		what := f.Condition
		if f.Kind != "condition" {
			what = "fault " + f.Kind
		}
		if f.Kind == corpus.FaultCondition {
			what += " " + f.Condition // one line a faulty condition
		}
		if seen[what] {
			return
		}
		seen[what] = true
		line := fmt.Sprintf("actfuzz run: first hit of %s at simulation %d: %s replay %s", what, g.FirstSim, prog, g.Path)
		if f.Source != "" {
			line += "\n  checks " + f.Source
		}
		p.note(line)
	}
}

// done ends the status line on a terminal.
func (p *progress) done() {
	if p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// statusText is one status line of at most statusWidth columns: elapsed
// time, simulations (of the budget), sims/s, the time left (ETA), the step,
// regions at k=16 and the findings.
func statusText(st act.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s/%s sims %s/s", clock(st.Elapsed), st.Method, count(st.Sims), count(st.Budget), count(int(st.SimsPerS+0.5)))
	if left, ok := st.Left(); ok {
		fmt.Fprintf(&b, " ETA %s", clock(left))
	} else {
		b.WriteString(" ETA ?") // until the first simulation ends
	}
	approx := "" // k=1 estimated: the store's exact sets start above it
	if st.StoreFloor > 16 {
		approx = "~"
	}
	fmt.Fprintf(&b, " %s k16 %s%s found %d", shortStep(st.Step), approx, count(int(st.Regions[16])), st.Findings)
	if st.Faults > 0 {
		fmt.Fprintf(&b, " faults %d", st.Faults)
	}
	s := b.String()
	if r := []rune(s); len(r) > statusWidth {
		s = string(r[:statusWidth])
	}
	return s
}

// clock formats a duration as H:MM:SS.
func clock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// count formats a count in at most 5 characters: 12345, 123.4k, 12.3M.
func count(n int) string {
	switch {
	case n < 100_000:
		return fmt.Sprint(n)
	case n < 10_000_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

func shortStep(s string) string {
	switch s {
	case "random":
		return "rand"
	case "estimation":
		return "estim"
	case "concatenation":
		return "concat"
	}
	return s
}

// verbosityFlags are -v and --quiet, which every command has.
type verbosityFlags struct {
	verbose, quiet, debug *bool
}

func addVerbosityFlags(fs *flag.FlagSet) verbosityFlags {
	return verbosityFlags{
		verbose: fs.Bool("v", false, "verbose: also log what the command does (level info)"),
		quiet:   fs.Bool("quiet", false, "no status line and no informational messages: results and errors only"),
		debug:   fs.Bool("debug", false, "log at level debug: what -v logs, and what developers look for (a worker host's every chunk fetched and settled)"),
	}
}

// logger logs warnings and errors to stderr; with -v info too; with
// --quiet errors only; with --debug everything (it wins over the others).
func (v verbosityFlags) logger(stderr io.Writer) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case *v.debug:
		level = slog.LevelDebug
	case *v.quiet:
		level = slog.LevelError
	case *v.verbose:
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
}

// infoWriter is where informational messages go: stderr, or nowhere with
// --quiet.
func infoWriter(quiet bool, stderr io.Writer) io.Writer {
	if quiet {
		return io.Discard
	}
	return stderr
}
