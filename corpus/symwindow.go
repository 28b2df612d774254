package corpus

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/symbolic"
)

// SymWindow is the symbolic window a finding of ACT's symbolic step was
// found in (seed key symbolic_window, format version 3): the window of a
// campaign's configuration whose classes ExploreSeed enumerates, in the
// terms of SymSeedOptions. A hang of such a window (act/symstep.go) is
// not a property of the configuration — an ordinary run of it does not
// hang — but of one of the window's branches, and which one is not known
// (the watchdog abandons the whole window): what reproduces it is the
// exploration of the same window, which `actfuzz replay` runs under the
// watchdog when a hang seed carries this field.
//
//	"symbolic_window": {
//	  "window": "last 2 before hit", // ParseWindowSpec's text
//	  "at_ns": 1234000000,           // the moment "last N before hit" ends at
//	  "flow": 0,                     // absent: the flow with a state record at at_ns
//	  "lo_ms": 1, "hi_ms": 200, "res_ms": 1,
//	  "reductions": "SCI",
//	  "max_branches": 32,
//	  "watchdog_ns": 60000000000     // the watchdog that abandoned it (wall clock)
//	}
type SymWindow struct {
	Window string `json:"window"`
	AtNS   int64  `json:"at_ns,omitempty"`
	// Flow is the window's flow; nil: the flow with a state record at
	// AtNS (FlowAtHit), which is how the symbolic step picks it.
	Flow        *int    `json:"flow,omitempty"`
	LoMS        float64 `json:"lo_ms"`
	HiMS        float64 `json:"hi_ms"`
	ResMS       float64 `json:"res_ms"`
	Reductions  string  `json:"reductions"`
	MaxBranches int     `json:"max_branches"`
	WatchdogNS  int64   `json:"watchdog_ns,omitempty"`
}

// NewSymWindow records the window of ExploreSeed's options opt.
func NewSymWindow(opt *SymSeedOptions, watchdog time.Duration) *SymWindow {
	w := &SymWindow{Window: opt.Window.Text, AtNS: int64(opt.At), LoMS: float64(opt.Lo) / 1e6, HiMS: float64(opt.Hi) / 1e6,
		ResMS: float64(opt.Res) / 1e6, Reductions: opt.Reductions.String(), MaxBranches: opt.MaxBranches, WatchdogNS: int64(watchdog)}
	if opt.Flow >= 0 {
		f := opt.Flow
		w.Flow = &f
	}
	return w
}

// Options is the window as ExploreSeed's options (without conditions,
// watchers or callbacks). Errors name the field.
func (w *SymWindow) Options() (SymSeedOptions, error) {
	var opt SymSeedOptions
	spec, err := ParseWindowSpec(w.Window)
	if err != nil {
		return opt, fmt.Errorf("symbolic_window.window: %w", err)
	}
	if spec.Kind == "before" && w.AtNS <= 0 {
		return opt, fmt.Errorf("symbolic_window.at_ns: %d: %q needs the moment it ends at (> 0)", w.AtNS, w.Window)
	}
	if w.AtNS < 0 {
		return opt, fmt.Errorf("symbolic_window.at_ns: %d: want ≥ 0", w.AtNS)
	}
	flow := FlowAtHit
	if w.Flow != nil {
		if *w.Flow < 0 {
			return opt, fmt.Errorf("symbolic_window.flow: %d: want a flow index ≥ 0 (absent: the flow at the hit)", *w.Flow)
		}
		flow = *w.Flow
	} else if spec.Kind != "before" {
		return opt, fmt.Errorf("symbolic_window.flow: missing: the flow at the hit needs the window 'last N before hit'")
	}
	ms := func(field string, v float64) (time.Duration, error) {
		if math.IsNaN(v) || v < 0 || v > netenv.MaxDelay {
			return 0, fmt.Errorf("symbolic_window.%s: %v ms, want 0–%g", field, v, netenv.MaxDelay)
		}
		return time.Duration(math.Round(v * 1e6)), nil
	}
	lo, err := ms("lo_ms", w.LoMS)
	if err != nil {
		return opt, err
	}
	hi, err := ms("hi_ms", w.HiMS)
	if err != nil {
		return opt, err
	}
	res, err := ms("res_ms", w.ResMS)
	if err != nil {
		return opt, err
	}
	switch {
	case hi < lo:
		return opt, fmt.Errorf("symbolic_window.hi_ms: %v < lo_ms %v", w.HiMS, w.LoMS)
	case res <= 0:
		return opt, fmt.Errorf("symbolic_window.res_ms: %v: want a resolution > 0", w.ResMS)
	case lo%res != 0 || hi%res != 0:
		return opt, fmt.Errorf("symbolic_window.res_ms: lo_ms %v and hi_ms %v must be multiples of %v", w.LoMS, w.HiMS, w.ResMS)
	case w.MaxBranches < 1:
		return opt, fmt.Errorf("symbolic_window.max_branches: %d: want ≥ 1", w.MaxBranches)
	case w.WatchdogNS < 0:
		return opt, fmt.Errorf("symbolic_window.watchdog_ns: %d: want ≥ 0", w.WatchdogNS)
	}
	red, err := symbolic.ParseReductions(w.Reductions)
	if err != nil {
		return opt, fmt.Errorf("symbolic_window.reductions: %w", err)
	}
	if red.H {
		return opt, errors.New("symbolic_window.reductions: H (state hashing) needs a topology scenario")
	}
	return SymSeedOptions{Window: spec, Flow: flow, Lo: lo, Hi: hi, Res: res, Reductions: red, MaxBranches: w.MaxBranches,
		At: time.Duration(w.AtNS)}, nil
}
