package act

import (
	"context"
	"errors"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// SymbolicWindowReplay is what ReplaySymbolicWindow saw.
type SymbolicWindowReplay struct {
	// Hung: no simulation of the window finished within Watchdog (wall
	// clock), as when the campaign abandoned it.
	Hung     bool          `json:"hung"`
	Watchdog time.Duration `json:"watchdog_ns"`
	// The window as located (when the exploration got that far).
	Flow int    `json:"flow"`
	Kind string `json:"kind,omitempty"`
	From uint64 `json:"from"`
	N    int    `json:"n"`
	// Branches is the number of classes run, Complete whether they
	// cover the window (not when capped at the seed's max_branches);
	// Events their simulated events, with the locating run's.
	Branches int    `json:"branches"`
	Complete bool   `json:"complete"`
	Events   uint64 `json:"events"`
}

// ReplaySymbolicWindow explores the window a seed's symbolic_window names
// (a hang of ACT's symbolic step, symstep.go) again, as the campaign did:
// in process, on a goroutine watched by the watchdog, which each finished
// branch resets. watchdog ≤ 0 takes the seed's (the campaign's), else
// defaultWatchdog. A hang is a matter of wall clock (the machine's load,
// the watchdog's length), so a window that finishes this time is reported
// as such (Hung false), not as proof that it cannot hang; a window that
// hangs again leaves its goroutine running, as the campaign did, which the
// caller's process exit ends.
func ReplaySymbolicWindow(ctx context.Context, s *corpus.Seed, watchdog time.Duration) (*SymbolicWindowReplay, error) {
	if s.SymWindow == nil {
		return nil, errors.New("symbolic_window: missing: the seed names no window of the symbolic step")
	}
	opt, err := s.SymWindow.Options()
	if err != nil {
		return nil, err
	}
	if watchdog <= 0 {
		watchdog = time.Duration(s.SymWindow.WatchdogNS)
	}
	if watchdog <= 0 {
		watchdog = defaultWatchdog
	}
	// The configuration the window was explored on: the seed without its
	// finding (a hang has no condition to check) or the window itself.
	base := *s
	base.Finding, base.SymWindow = nil, nil
	live := newWindowLiveness()
	opt.OnBranch = func(*symbolic.Branch, *corpus.PinnedDelays) error {
		return live.guard(func() {})
	}
	res, hung, err := exploreWatched(ctx, live, watchdog, &base, opt)
	out := &SymbolicWindowReplay{Hung: hung, Watchdog: watchdog}
	if res != nil {
		out.Flow, out.Kind, out.From, out.N = res.Flow, res.Kind, res.From, res.N
		out.Events = res.LocateEvents
		if r := res.Report; r != nil {
			out.Branches, out.Complete, out.Events = r.Branches, r.Complete, out.Events+r.EventsSimulated
		}
	}
	if err != nil {
		return out, err
	}
	return out, ctx.Err()
}
