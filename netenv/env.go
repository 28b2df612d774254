package netenv

import (
	"fmt"
	"math"
	"time"
)

// Env is one network environment p ∈ P (ACT §4.1). Its fields are the
// rows of the parameter table (params.go), which says what each means and
// which values it takes; the link model reads them by name.
type Env struct {
	Loss   float64 `json:"loss" yaml:"loss"`     // random loss probability per data packet, [0,1]
	BW     float64 `json:"bw" yaml:"bw"`         // bottleneck bandwidth, Mbit/s
	Delay  float64 `json:"delay" yaml:"delay"`   // one-way propagation delay, ms
	QShape float64 `json:"qshape" yaml:"qshape"` // Gamma shape of the random queuing delay
	QScale float64 `json:"qscale" yaml:"qscale"` // Gamma scale of the random queuing delay, ms
	App    float64 `json:"app" yaml:"app"`       // application rate, Mbit/s
	Buffer int     `json:"buffer" yaml:"buffer"` // bottleneck buffer, packets

	// The bottleneck's queue discipline (aqm.go) and its CoDel
	// parameters (RFC 8289 §4.2, §4.3), ms.
	AQM           AQM     `json:"aqm,omitempty" yaml:"aqm"`
	CoDelTarget   float64 `json:"codel_target,omitempty" yaml:"codel_target"`
	CoDelInterval float64 `json:"codel_interval,omitempty" yaml:"codel_interval"`
	// A token-bucket policer in front of the bottleneck (shaping.go):
	// rate in Mbit/s (0: none), bucket in kB.
	PolicerRate  float64 `json:"policer_rate,omitempty" yaml:"policer_rate"`
	PolicerBurst float64 `json:"policer_burst,omitempty" yaml:"policer_burst"`
	// ACK aggregation on the reverse path (shaping.go): ACKs held and
	// released together every AckAgg ms (0: none), or as soon as
	// AckAggMax are held (0: no limit).
	AckAgg    float64 `json:"ack_agg,omitempty" yaml:"ack_agg"`
	AckAggMax int     `json:"ack_agg_max,omitempty" yaml:"ack_agg_max"`
	// A trace-driven bottleneck (linktrace.go): the data direction
	// delivers at a shipped trace's opportunities, their rate multiplied
	// by TraceScale (0 or 1: as recorded), instead of at BW.
	Trace LinkTrace `json:"link_trace,omitempty" yaml:"link_trace"`
	// ECN (RFC 3168): the endpoints negotiate it when any phase has it on,
	// and a bottleneck with it on marks ECN-capable packets instead of
	// dropping them (RED, CoDel) and marks every packet that arrives to a
	// queue of ECNK or more packets (DCTCP's step marking; 0: none).
	ECN        ECNMode `json:"ecn,omitempty" yaml:"ecn"`
	ECNK       int     `json:"ecn_k,omitempty" yaml:"ecn_k"`
	TraceScale float64 `json:"link_trace_scale,omitempty" yaml:"link_trace_scale"`
}

// DefaultEnv is `actfuzz sim` with no flags: every parameter's Default
// (10 Mbit/s, 20 ms, loss 1e-4, 100-packet buffer, an application faster
// than the link).
func DefaultEnv() Env {
	var e Env
	for i := range params {
		params[i].set(&e, params[i].Default)
	}
	return e
}

// Get returns parameter i of the table.
func (e *Env) Get(i int) float64 { return params[i].get(e) }

// Set sets parameter i of the table.
func (e *Env) Set(i int, v float64) { params[i].set(e, v) }

// Validate checks the environment and names the offending parameter.
func (e *Env) Validate() error {
	for i := range params {
		if err := params[i].Check(params[i].get(e)); err != nil {
			return err
		}
	}
	// The one constraint across parameters: the Gamma mean in ns must
	// stay far from int64 overflow.
	if e.QShape*e.QScale > MaxQMean {
		return fmt.Errorf("parameter qshape×qscale = %v: mean queuing delay must be ≤ %g ms", e.QShape*e.QScale, MaxQMean)
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

// MaxPhases (max_phases) caps a schedule's phases. ACT's concatenation
// and directed steps add one phase to a schedule each time they extend it
// (the selector stops there and says so); a seed's schedule is read from
// a file and each phase is an event of the simulation and a label of the
// finding's plot.
const MaxPhases = 1000

// Validate checks the number of phases (MaxPhases), every phase and that
// switch times increase.
func (s Schedule) Validate() error {
	if len(s) == 0 {
		return fmt.Errorf("schedule is empty")
	}
	if len(s) > MaxPhases {
		return fmt.Errorf("schedule: %d phases, over the cap of %d (max_phases)", len(s), MaxPhases)
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
