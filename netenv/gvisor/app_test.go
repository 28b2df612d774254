package gvisor

import (
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/netenvtest"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestAppRateEveryPhase: as natively, the 4 MB send buffer keeps a fast
// first phase from writing the whole transfer, so a slow second phase
// leaves in-flight below cwnd/2.
func TestAppRateEveryPhase(t *testing.T) {
	netenvtest.AppRateEveryPhase(t, func(t *testing.T, cfg netenv.Config) (netenv.Result, []observe.Record) {
		obs := &recObs{}
		res := run(t, cfg, obs)
		return res, obs.recs
	}, "cubic", 20_000_000)
}
