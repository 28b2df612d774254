package netenv_test

import (
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/netenvtest"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// TestAppRateEveryPhase: the application writes at the rate of each phase
// into a bounded send buffer (netenv/tcp/app.go), so a slow phase after a
// fast one makes the flow application-limited mid-transfer. With the old
// unlimited buffer the fast first phase wrote the whole transfer at once
// and the slow phase changed nothing.
func TestAppRateEveryPhase(t *testing.T) {
	netenvtest.AppRateEveryPhase(t, func(t *testing.T, cfg netenv.Config) (netenv.Result, []observe.Record) {
		res, rec := run(t, cfg)
		return res, rec.recs
	}, "cubic", 40_000_000)
}

// TestSlowPhaseAfterFast is the measurement of the issue: app 10000 Mbit/s,
// then 0.01 Mbit/s from 0.5 s, used to finish 15 MB at 2.5 s as if the
// second phase did not exist. Now the application has written at most the
// send buffer's 4 MB beyond what was acknowledged by 0.5 s, and the rest
// comes at 0.01 Mbit/s.
func TestSlowPhaseAfterFast(t *testing.T) {
	fast := netenv.DefaultEnv()
	slow := fast
	slow.App = 0.01
	cfg := netenv.Config{Seed: 1, Flows: []netenv.Flow{{CCA: "cubic", Bytes: netenv.DefaultBytes}}, SACK: true,
		Schedule: netenv.Schedule{{Env: fast, Until: 500 * time.Millisecond}, {Env: slow}}}
	cfg.Limits.MaxTime = 60 * time.Second
	res, _ := run(t, cfg)
	f := res.Flows[0]
	t.Logf("after 60 s: done %v, delivered %d bytes", f.Done, f.DeliveredBytes)
	if f.Done || f.DeliveredBytes > 6_000_000 {
		t.Errorf("done %v with %d bytes delivered: the slow phase changed nothing", f.Done, f.DeliveredBytes)
	}
}
