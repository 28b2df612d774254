package cluster

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

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

// TestRejectedResultsLogged: rejected results are logged a line a reason
// at most every rejectLogEvery, the next line saying how many came since.
func TestRejectedResultsLogged(t *testing.T) {
	var buf syncBuffer
	e := &Executor{log: slog.New(slog.NewTextHandler(&buf, nil))}
	for range 5 {
		e.noteRejected("unknown batch", 100)
	}
	e.noteRejected("malformed", 7)
	if got := strings.Count(buf.String(), "result rejected"); got != 2 {
		t.Fatalf("6 rejections of 2 reasons within a minute: %d lines, want 2:\n%s", got, buf.String())
	}
	e.mu.Lock()
	e.rejected["unknown batch"].last = time.Now().Add(-rejectLogEvery)
	e.mu.Unlock()
	e.noteRejected("unknown batch", 100)
	if !strings.Contains(buf.String(), `reason="unknown batch" bytes=100 also_rejected_since_last_line=4`) {
		t.Fatalf("the line a minute later:\n%s", buf.String())
	}
}
