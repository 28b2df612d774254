// Package bounded runs a piece of work under a watchdog and a context on a
// goroutine of its own, so that the caller regains control when either
// ends even if the work does not look at its context: a command (replay,
// minimize) then answers Ctrl-C, SIGTERM and --watchdog whatever the seed
// makes the simulator, a CCAI or a condition do.
package bounded

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrWatchdog is wrapped by the error of work that went past its
// watchdog.
var ErrWatchdog = errors.New("ran past the watchdog")

// ErrAbandoned is wrapped (with ErrWatchdog or the context's error) when
// the work did not return within Grace of its end: it is still running,
// on a goroutine nobody waits for, and the caller should end the process
// rather than start more.
var ErrAbandoned = errors.New("did not stop: abandoned")

// Grace is how long Run waits, once the watchdog has expired or the
// context is done, for the work to see its cancelled context and return.
// The simulator looks at its context every few thousand events, so it
// returns within milliseconds; Grace only bounds the wait for work that
// never looks.
const Grace = 2 * time.Second

// Run runs fn with ctx, and with a deadline watchdog from now when
// watchdog > 0. When fn returns in time it returns fn's result. Otherwise
// it returns, as soon as fn has returned or Grace has passed, fn's result
// with an error that wraps ErrWatchdog (the deadline passed, ctx did not
// end) or ctx.Err() (ctx ended), and ErrAbandoned if fn is still running.
func Run[T any](ctx context.Context, watchdog time.Duration, fn func(context.Context) (T, error)) (T, error) {
	rctx, cancel := ctx, context.CancelFunc(func() {})
	if watchdog > 0 {
		rctx, cancel = context.WithTimeout(ctx, watchdog)
	}
	defer cancel()
	type outcome struct {
		v   T
		err error
	}
	done := make(chan outcome, 1) // fn's goroutine never blocks on it
	go func() {
		v, err := fn(rctx)
		done <- outcome{v, err}
	}()
	ended := func(abandoned bool) error {
		err := ctx.Err()
		if err == nil {
			err = fmt.Errorf("%w (%v)", ErrWatchdog, watchdog)
		}
		if abandoned {
			return fmt.Errorf("%w: %w", ErrAbandoned, err)
		}
		return err
	}
	select {
	case o := <-done:
		if o.err != nil && rctx.Err() != nil {
			return o.v, ended(false)
		}
		return o.v, o.err
	case <-rctx.Done():
	}
	grace := time.NewTimer(Grace)
	defer grace.Stop()
	select {
	case o := <-done:
		if o.err == nil {
			return o.v, nil // it finished as the deadline came
		}
		return o.v, ended(false)
	case <-grace.C:
		var zero T
		return zero, ended(true)
	}
}
