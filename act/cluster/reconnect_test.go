package cluster

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// TestRequestAgainAfterReconnect: a request whose answer went with the
// connection (the server restarted while the responder held it) is sent
// again once the connection is restored, and answered. Without it the
// request waits for its context's end: a coordinator's checkpoint waited
// so for minutes under bench/cluster-chaos.sh.
func TestRequestAgainAfterReconnect(t *testing.T) {
	srv := startRestartable(t)
	nc, responder := connect(t, srv.s.ClientURL()), connect(t, srv.s.ClientURL())
	var asked atomic.Int32
	held := make(chan struct{})
	// The first request is held, never answered: the server goes down
	// with it. The next ones are answered.
	if _, err := responder.Subscribe("q", func(m *nats.Msg) {
		if asked.Add(1) == 1 {
			close(held)
			return
		}
		_ = m.Respond([]byte("ok"))
	}); err != nil {
		t.Fatal(err)
	}
	if err := responder.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	var answer []byte
	go func() {
		done <- againAfterReconnect(ctx, nc, func(ctx context.Context) error {
			m, err := nc.RequestWithContext(ctx, "q", nil)
			if err == nil {
				answer = m.Data
			}
			return err
		})
	}()
	select {
	case <-held:
	case <-ctx.Done():
		t.Fatal("the request never came")
	}
	srv.restart(0)
	if err := <-done; err != nil || string(answer) != "ok" {
		t.Fatalf("a request whose answer was lost with the server: %v (answer %q, asked %d times)", err, answer, asked.Load())
	}
	if n := asked.Load(); n < 2 {
		t.Fatalf("asked %d times", n)
	}
	// Without a reconnection nothing is sent again: the first error is
	// returned.
	calls := 0
	err := againAfterReconnect(ctx, nc, func(ctx context.Context) error {
		calls++
		_, err := nc.RequestWithContext(ctx, "nobody", nil)
		return err
	})
	if err == nil || calls != 1 {
		t.Fatalf("a request nobody answers: %v after %d calls", err, calls)
	}
}
