package ns3

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/netenvtest"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

type recs struct{ r []observe.Record }

func (o *recs) Observe(r *observe.Record) { o.r = append(o.r, *r) }

// TestAppRateEveryPhase: as natively, the driver's 4 MB send buffer keeps
// a fast first phase from writing the whole transfer, so a slow second
// phase leaves in-flight below cwnd/2.
func TestAppRateEveryPhase(t *testing.T) {
	s := realSubject(t)
	netenvtest.AppRateEveryPhase(t, func(t *testing.T, cfg netenv.Config) (netenv.Result, []observe.Record) {
		o := &recs{}
		res, err := s.Run(context.Background(), cfg, o)
		if err != nil {
			t.Fatal(err)
		}
		return res, o.r
	}, "TcpCubic", 30_000_000)
}
