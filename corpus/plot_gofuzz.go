//go:build gofuzz

package corpus

import (
	"errors"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TracePlot draws nothing in go-fuzz builds (see coverage/plot_gofuzz.go).
type TracePlot struct {
	Flow  int32
	CCAI  []string
	Reads []string
	Caps  netenv.Capabilities
}

// NewTracePlot is the plot of a seed's replay.
func NewTracePlot(s *Seed, caps netenv.Capabilities) *TracePlot {
	return &TracePlot{CCAI: s.CCAI, Caps: caps}
}

// Observe implements observe.Observer.
func (p *TracePlot) Observe(*observe.Record) {}

// Save is unavailable in go-fuzz builds.
func (p *TracePlot) Save(path, title string, sched netenv.Schedule, hit time.Duration, hitCwnd float64) error {
	return errors.New("corpus: plots are not built into go-fuzz binaries")
}

// Save is unavailable in go-fuzz builds.
func (d *DeliveryTrace) Save(path, title string) error {
	return errors.New("corpus: plots are not built into go-fuzz binaries")
}
