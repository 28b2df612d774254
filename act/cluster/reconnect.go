package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// A request to the server (a JetStream API call, an object's put, a store
// part's request) whose connection is lost while the server holds it is
// never answered: nats.go reconnects, but the reply went with the old
// connection, and the request waits for its context's end. A coordinator's
// checkpoint asked for the parts' object store while bench/cluster-chaos.sh
// killed the nats-server (kill -9) and waited 3 minutes, of a 10 minute
// deadline, the campaign stopped meanwhile. So requests that may wait long
// also end when the connection is restored, and are sent again.

// reconnectPoll is how often untilReconnect looks at the connection's
// count of reconnections.
const reconnectPoll = 100 * time.Millisecond

// untilReconnect returns ctx, cancelled also once nc has reconnected after
// this call. stop releases it and reports whether a reconnection ended it.
func untilReconnect(ctx context.Context, nc *nats.Conn) (rctx context.Context, stop func() (reconnected bool)) {
	rctx, cancel := context.WithCancel(ctx)
	if nc == nil {
		return rctx, func() bool { cancel(); return false }
	}
	n0 := nc.Stats().Reconnects
	done := make(chan struct{})
	var again bool
	go func() {
		defer close(done)
		t := time.NewTicker(reconnectPoll)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				if nc.Stats().Reconnects != n0 {
					again = true
					cancel()
					return
				}
			}
		}
	}()
	return rctx, func() bool { cancel(); <-done; return again }
}

// reconnectSettle is how long after a reconnection a request that finds
// no responder is sent again: the server's JetStream, or the subscriber
// (a store part), may not be back yet.
const reconnectSettle = 10 * time.Second

// againAfterReconnect calls f until it returns without its context having
// ended by a reconnection of nc (see untilReconnect), or ctx ends. For
// reconnectSettle after such a reconnection, a call that found no
// responder is made again too.
func againAfterReconnect(ctx context.Context, nc *nats.Conn, f func(context.Context) error) error {
	var settling time.Time
	for {
		rctx, stop := untilReconnect(ctx, nc)
		err := f(rctx)
		reconnected := stop()
		switch {
		case err == nil || ctx.Err() != nil:
			return err
		case reconnected:
			settling = time.Now().Add(reconnectSettle)
		case time.Now().Before(settling) && (errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrJetStreamNotEnabled)):
			select {
			case <-ctx.Done():
				return err
			case <-time.After(reconnectPoll):
			}
		default:
			return err
		}
	}
}
