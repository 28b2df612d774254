package netenv

import (
	"fmt"
	"math"
	"time"
)

// Env is one network environment p ∈ P (ACT §4.1).
type Env struct {
	Loss   float64 `json:"loss"`   // random loss probability per data packet, [0,1]
	BW     float64 `json:"bw"`     // bottleneck bandwidth, Mbit/s
	Delay  float64 `json:"delay"`  // one-way propagation delay, ms
	QShape float64 `json:"qshape"` // Gamma shape of the random queuing delay
	QScale float64 `json:"qscale"` // Gamma scale of the random queuing delay, ms
	App    float64 `json:"app"`    // application rate, Mbit/s
	Buffer int     `json:"buffer"` // bottleneck buffer, packets
}

// DefaultEnv is `actfuzz sim` with no flags: 10 Mbit/s, 20 ms, loss 1e-4,
// 100-packet buffer, an application faster than the link.
func DefaultEnv() Env {
	return Env{Loss: 1e-4, BW: 10, Delay: 20, App: 10000, Buffer: 100}
}

// ParamNames lists the parameters of P in order; flag and YAML names.
var ParamNames = []string{"loss", "bw", "delay", "qshape", "qscale", "app", "buffer"}

// ParamDocs describes each parameter, for `actfuzz list`.
var ParamDocs = map[string]string{
	"loss":   "random loss probability per data packet [0,1]",
	"bw":     "bottleneck bandwidth (Mbit/s)",
	"delay":  "one-way propagation delay (ms)",
	"qshape": "Gamma shape of the random per-packet queuing delay",
	"qscale": "Gamma scale of the random per-packet queuing delay (ms)",
	"app":    "application sending rate (Mbit/s)",
	"buffer": "bottleneck buffer (packets)",
}

// Get returns parameter i of ParamNames.
func (e *Env) Get(i int) float64 {
	switch i {
	case 0:
		return e.Loss
	case 1:
		return e.BW
	case 2:
		return e.Delay
	case 3:
		return e.QShape
	case 4:
		return e.QScale
	case 5:
		return e.App
	case 6:
		return float64(e.Buffer)
	}
	panic(fmt.Sprintf("netenv: parameter index %d out of range", i))
}

// Set sets parameter i of ParamNames.
func (e *Env) Set(i int, v float64) {
	switch i {
	case 0:
		e.Loss = v
	case 1:
		e.BW = v
	case 2:
		e.Delay = v
	case 3:
		e.QShape = v
	case 4:
		e.QScale = v
	case 5:
		e.App = v
	case 6:
		e.Buffer = int(math.Round(v))
	default:
		panic(fmt.Sprintf("netenv: parameter index %d out of range", i))
	}
}

// Limits on parameters that the simulator can represent. Beyond them a run
// would be meaningless (zero bandwidth) or overflow nanosecond arithmetic.
const (
	MinBW     = 1e-3 // Mbit/s
	MaxBW     = 1e6  // Mbit/s (1 Tbit/s)
	MaxDelay  = 1e6  // ms
	MaxQMean  = 1e6  // ms, shape × scale
	MaxBuffer = 1 << 24
)

// Validate checks the environment and names the offending parameter.
func (e *Env) Validate() error {
	bad := func(name string, v any, why string) error {
		return fmt.Errorf("parameter %s = %v: %s", name, v, why)
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(e.Loss) || e.Loss < 0 || e.Loss > 1:
		return bad("loss", e.Loss, "must be a probability in [0, 1]")
	case !finite(e.BW) || e.BW < MinBW || e.BW > MaxBW:
		return bad("bw", e.BW, fmt.Sprintf("must be in [%g, %g] Mbit/s", MinBW, MaxBW))
	case !finite(e.Delay) || e.Delay < 0 || e.Delay > MaxDelay:
		return bad("delay", e.Delay, fmt.Sprintf("must be in [0, %g] ms", MaxDelay))
	case !finite(e.QShape) || e.QShape < 0:
		return bad("qshape", e.QShape, "must be ≥ 0")
	case !finite(e.QScale) || e.QScale < 0:
		return bad("qscale", e.QScale, "must be ≥ 0 ms")
	case e.QShape*e.QScale > MaxQMean:
		return bad("qshape×qscale", e.QShape*e.QScale, fmt.Sprintf("mean queuing delay must be ≤ %g ms", MaxQMean))
	case !finite(e.App) || e.App <= 0 || e.App > MaxBW*10:
		return bad("app", e.App, "must be a positive rate in Mbit/s")
	case e.Buffer < 1 || e.Buffer > MaxBuffer:
		return bad("buffer", e.Buffer, fmt.Sprintf("must be in [1, %d] packets", MaxBuffer))
	}
	return nil
}

// bps converts a rate in Mbit/s to bit/s.
func bps(mbps float64) uint64 { return uint64(math.Round(mbps * 1e6)) }

// ms converts milliseconds to a duration.
func ms(v float64) time.Duration { return time.Duration(math.Round(v * 1e6)) }

// Phase is one step (p_i, t_i) of a schedule: Env applies until Until.
type Phase struct {
	Env   Env           `json:"env"`
	Until time.Duration `json:"until_ns"` // 0 on the last phase: until the end
}

// Schedule is [(p1, t1), …, (pn, tn)]: the environment changes at each t_i
// (ACT §2.3, parameter concatenation).
type Schedule []Phase

// Validate checks every phase and that switch times increase.
func (s Schedule) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("schedule is empty")
	}
	var last time.Duration
	for i := range s {
		if err := s[i].Env.Validate(); err != nil {
			return fmt.Errorf("schedule phase %d: %w", i+1, err)
		}
		if i < len(s)-1 {
			if s[i].Until <= last {
				return fmt.Errorf("schedule phase %d: switch time %v must be after %v", i+1, s[i].Until, last)
			}
			last = s[i].Until
		}
	}
	return nil
}

// Constant is a one-phase schedule.
func Constant(e Env) Schedule { return Schedule{{Env: e}} }
