package cluster

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
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

// TestAsyncErrorsLogged: nats.go's asynchronous errors (here a slow
// consumer's) go to the connection's logger, not raw to stderr, where
// --quiet could not silence them.
func TestAsyncErrorsLogged(t *testing.T) {
	s := startServer(t, t.TempDir(), -1)
	var buf syncBuffer
	nc, err := Connect(ConnectOptions{URL: s.ClientURL(), Name: t.Name(), Logger: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	release := make(chan struct{})
	sub, err := nc.Subscribe("slow", func(*nats.Msg) { <-release })
	if err != nil {
		t.Fatal(err)
	}
	defer close(release)
	if err := sub.SetPendingLimits(1, 1<<20); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := nc.Publish("slow", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(buf.String(), "slow consumer") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := buf.String(); !strings.Contains(got, `msg="nats: asynchronous error" subject=slow`) || !strings.Contains(got, "slow consumer") {
		t.Fatalf("the connection's log: %q", got)
	}
}

// syncBuffer is a bytes.Buffer for a logger's writes from other goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
