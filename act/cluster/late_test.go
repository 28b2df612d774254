package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/act"
)

// lateProxy is a TCP proxy in front of a NATS server that holds back the
// first JetStream deliveries it passes to its clients (MSG and HMSG frames
// whose reply subject is $JS.ACK.…) by delay, as a loaded host, a loaded
// server or a slow link may; every other frame passes at once.
type lateProxy struct {
	ln     net.Listener
	target string
	delay  time.Duration
	left   atomic.Int64 // deliveries still to hold back
	held   atomic.Int64 // deliveries held back
}

// startLateProxy proxies the server at target, holding back its first n
// deliveries by delay; it stops at the end of the test.
func startLateProxy(t *testing.T, target string, delay time.Duration, n int) *lateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &lateProxy{ln: ln, target: target, delay: delay}
	p.left.Store(int64(n))
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				p.serve(c)
			}()
		}
	}()
	return p
}

func (p *lateProxy) url() string { return "nats://" + p.ln.Addr().String() }

func (p *lateProxy) serve(client net.Conn) {
	defer client.Close()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		return
	}
	defer server.Close()
	go func() {
		_, _ = io.Copy(server, client)
		server.Close()
	}()
	var mu sync.Mutex // one frame at a time to the client
	write := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = client.Write(b)
	}
	var late sync.WaitGroup
	defer late.Wait()
	br := bufio.NewReader(server)
	for {
		frame, reply, err := readFrame(br)
		if err != nil {
			return
		}
		if strings.HasPrefix(reply, "$JS.ACK.") && p.left.Add(-1) >= 0 {
			p.held.Add(1)
			late.Add(1)
			time.AfterFunc(p.delay, func() {
				defer late.Done()
				write(frame)
			})
			continue
		}
		write(frame)
	}
}

// readFrame reads one frame of the NATS protocol from the server: a line,
// or a message with its payload; reply is a message's reply subject.
func readFrame(br *bufio.Reader) (frame []byte, reply string, err error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return nil, "", err
	}
	f := strings.Fields(line)
	if len(f) == 0 || (f[0] != "MSG" && f[0] != "HMSG") {
		return []byte(line), "", nil
	}
	// MSG subject sid [reply] size; HMSG subject sid [reply] hdr total.
	sizes := 1
	if f[0] == "HMSG" {
		sizes = 2
	}
	if len(f) == 4+sizes {
		reply = f[3]
	}
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return nil, "", fmt.Errorf("frame %q: %w", line, err)
	}
	frame = make([]byte, len(line)+n+2)
	copy(frame, line)
	if _, err := io.ReadFull(br, frame[len(line):]); err != nil {
		return nil, "", err
	}
	return frame, reply, nil
}

// A chunk the server delivers to a host late — 1.5 s after the host asked
// for one, longer than nats.go's Fetch waits for an answer once the server
// has the request — is still the host's: it runs it, and no chunk is
// delivered twice (before, the host had given up on its request, the
// server counted the chunk delivered, and it came again only after
// AckWait: a campaign stalled for 30 s on a loaded machine). So is a
// result the server delivers to the coordinator late.
func TestLateDeliveryNotLost(t *testing.T) {
	c := testCampaign(t)
	ref, refDir := reference(t, c)
	s := startServer(t, t.TempDir(), -1)
	const late = 1500 * time.Millisecond
	hostPx := startLateProxy(t, s.Addr().String(), late, 6)
	coordPx := startLateProxy(t, s.Addr().String(), late, 40)
	hosts := startHosts(t, hostPx.url(), 1, 2, "")
	dir := t.TempDir()
	start := time.Now()
	const ackWait = 20 * time.Second
	rep, ex := clusterRun(t, context.Background(), c, connect(t, coordPx.url()), dir, Options{ID: "late", AckWait: ackWait}, nil, act.Options{})
	took := time.Since(start)
	hs, cs := hosts[0].Stats(), ex.Stats()
	t.Logf("%d sims in %v; deliveries held back: %d to the host, %d to the coordinator; host %+v; %+v",
		rep.Sims, took.Round(time.Millisecond), hostPx.held.Load(), coordPx.held.Load(), hs, cs)
	sameAsLocal(t, "cluster", ref, rep, refDir, dir)
	if hostPx.held.Load() == 0 || coordPx.held.Load() == 0 {
		t.Fatal("no delivery was held back: the test tests nothing")
	}
	if hs.Redelivered != 0 {
		t.Errorf("%d chunks delivered again: the host dropped a chunk that came late", hs.Redelivered)
	}
	if cs.Redelivered != 0 {
		t.Errorf("%d results delivered again: the coordinator dropped a result that came late", cs.Redelivered)
	}
	// No bound on took: a chunk or result that waited for its AckWait
	// comes again and is counted above; a wall-clock bound failed under
	// -race at load 12 (22.4 s, nothing delivered again).
}
