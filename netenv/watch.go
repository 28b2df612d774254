package netenv

import (
	"context"
	"time"
)

// Watch runs run on a goroutine of its own and returns what it returns,
// Wall set to its wall-clock time. It gives up on the run, calling abandon
// first, when ctx ends (ctx.Err()) or when progress has not changed for
// stall (a *Fault of kind "hang" whose detail is hang()): subjects whose
// code runs on goroutines we cannot stop (gVisor's processors, quic-go's
// connections) abandon the run and let it finish on its own.
func Watch(ctx context.Context, stall time.Duration, progress func() uint64, abandon func(), hang func() string,
	run func(context.Context) (Result, error)) (Result, error) {
	start := time.Now()
	type outcome struct {
		res Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := run(ctx)
		done <- outcome{res, err}
	}()
	tick := time.NewTicker(min(stall/4, time.Second))
	defer tick.Stop()
	last, since := progress(), time.Now()
	for {
		select {
		case o := <-done:
			o.res.Wall = time.Since(start)
			return o.res, o.err
		case <-ctx.Done():
			abandon()
			return Result{}, ctx.Err()
		case now := <-tick.C:
			if p := progress(); p != last {
				last, since = p, now
			} else if now.Sub(since) > stall {
				abandon()
				return Result{}, &Fault{Kind: "hang", Detail: hang()}
			}
		}
	}
}
