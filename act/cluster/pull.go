package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// pullGiveUp is how long after its expiry a pull request that the server
// has not answered is given up: the server answers every request it gets
// (a chunk, or a status), so only a lost connection or server leaves one
// unanswered; a chunk that comes later is received all the same.
const pullGiveUp = 5 * time.Second

// puller pulls a campaign's chunks for a worker host, one a request, with
// pull requests of its own (the JetStream API's CONSUMER.MSG.NEXT) whose
// answers come to one inbox that lives as long as the host serves the
// campaign.
//
// Not nats.go's Fetch: it waits for the answer on a timer of its own (1 s
// for FetchNoWait, MaxWait + 1 s for Fetch) and then unsubscribes, while
// the server, which has the request, may still deliver a chunk to it: the
// answer was slow (a loaded host or server, a slow link), the server counts
// the chunk delivered, no one holds it, and it comes again only after
// AckWait (30 s by default), the campaign's merge waiting for it meanwhile
// (TestLateDeliveryNotLost). Here a request ends when the server ends it (a
// chunk, or a status: no chunk now, the request expired), and a chunk that
// comes after its request was given up is received all the same: its
// heartbeats start at once, and the next pull returns it.
type puller struct {
	ctx     context.Context // the heartbeats stop with it
	nc      *nats.Conn
	subject string // the consumer's CONSUMER.MSG.NEXT subject
	inbox   string // a request's reply subject is inbox.N
	ackWait time.Duration
	sub     *nats.Subscription
	signal  chan struct{} // something came

	mu      sync.Mutex
	n       uint64
	waiting string   // the reply subject of the request waited for ("" none)
	ended   bool     // the server ended it
	err     error    // with an error status
	got     []pulled // chunks received, not yet pulled
	closed  bool
}

// pulled is a chunk received, its heartbeats going.
type pulled struct {
	m      *nats.Msg
	stopHB func()
}

// pullRequest is the JetStream API's request for messages of a pull
// consumer.
type pullRequest struct {
	Batch   int           `json:"batch"`
	Expires time.Duration `json:"expires,omitempty"`
	NoWait  bool          `json:"no_wait,omitempty"`
}

// newPuller subscribes the inbox of the pull requests for consumer of
// stream, whose AckWait is ackWait; the heartbeats of the chunks it
// receives stop with ctx.
func newPuller(ctx context.Context, nc *nats.Conn, stream, consumer string, ackWait time.Duration) (*puller, error) {
	p := &puller{ctx: ctx, nc: nc, subject: fmt.Sprintf("$JS.API.CONSUMER.MSG.NEXT.%s.%s", stream, consumer),
		inbox: nc.NewInbox(), ackWait: ackWait, signal: make(chan struct{}, 1)}
	sub, err := nc.Subscribe(p.inbox+".*", p.receive)
	if err != nil {
		return nil, fmt.Errorf("pull requests' inbox: %w", err)
	}
	p.sub = sub
	return p, nil
}

// receive takes an answer to a pull request.
func (p *puller) receive(m *nats.Msg) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case strings.HasPrefix(m.Reply, "$JS.ACK."): // a chunk
		if p.closed {
			_ = m.Nak() // another host may take it at once
			return
		}
		p.got = append(p.got, pulled{m: m, stopHB: heartbeat(p.ctx, m, p.ackWait)})
		if m.Subject == p.waiting {
			p.ended = true // a request of one
		}
	case m.Subject != p.waiting: // the end of a request given up
		return
	default:
		switch code := m.Header.Get("Status"); code {
		case "100": // an idle heartbeat (none is asked for)
			return
		case "404", "408": // no chunk now; the request expired
			p.ended = true
		default: // 409 (consumer deleted…), 503 (no responders: no consumer)…
			p.ended, p.err = true, fmt.Errorf("pull request: status %s %s", code, m.Header.Get("Description"))
		}
	}
	select {
	case p.signal <- struct{}{}:
	default:
	}
}

// pull returns a chunk: one received already (a request given up was
// answered after all), or the answer to a request for one that waits up
// to expires for it (0: answered at once). It returns nil and no error if
// there is none.
func (p *puller) pull(expires time.Duration) (*pulled, error) {
	p.mu.Lock()
	if c := p.pop(); c != nil {
		p.mu.Unlock()
		return c, nil
	}
	p.n++
	reply := fmt.Sprintf("%s.%d", p.inbox, p.n)
	p.waiting, p.ended, p.err = reply, false, nil
	p.mu.Unlock()
	body, err := json.Marshal(pullRequest{Batch: 1, Expires: expires, NoWait: expires == 0})
	if err != nil {
		return nil, err
	}
	if err := p.nc.PublishRequest(p.subject, reply, body); err != nil {
		return nil, fmt.Errorf("pull request: %w", err)
	}
	giveUp := time.NewTimer(expires + pullGiveUp)
	defer giveUp.Stop()
	for {
		p.mu.Lock()
		c, ended, err := p.pop(), p.ended, p.err
		if c != nil || ended {
			p.waiting = ""
		}
		p.mu.Unlock()
		if c != nil || ended {
			return c, err
		}
		select {
		case <-p.signal:
		case <-giveUp.C:
			p.mu.Lock()
			p.waiting = ""
			p.mu.Unlock()
			return nil, fmt.Errorf("pull request: no answer within %v", expires+pullGiveUp)
		}
	}
}

// prefetch asks for a chunk without waiting for the answer: a chunk that
// comes is received (its heartbeats going) and the next pull returns it
// at once; "no chunk now" is dropped, as the end of a request given up.
// It asks only if no chunk is received and waiting.
func (p *puller) prefetch() error {
	p.mu.Lock()
	if len(p.got) > 0 {
		p.mu.Unlock()
		return nil
	}
	p.n++
	reply := fmt.Sprintf("%s.%d", p.inbox, p.n)
	p.mu.Unlock()
	body, err := json.Marshal(pullRequest{Batch: 1, NoWait: true})
	if err != nil {
		return err
	}
	if err := p.nc.PublishRequest(p.subject, reply, body); err != nil {
		return fmt.Errorf("pull request: %w", err)
	}
	return nil
}

// pop returns the first chunk received, or nil (p.mu held).
func (p *puller) pop() *pulled {
	if len(p.got) == 0 {
		return nil
	}
	c := p.got[0]
	p.got = p.got[1:]
	return &c
}

// close stops receiving; the chunks received and not pulled are given
// back (naked: another host may take them at once).
func (p *puller) close() {
	p.mu.Lock()
	p.closed = true
	got := p.got
	p.got = nil
	p.mu.Unlock()
	// Drain, not Unsubscribe: a chunk already on its way to the inbox is
	// still received (and given back) rather than dropped.
	_ = p.sub.Drain()
	for _, c := range got {
		c.stopHB()
		_ = c.m.Nak()
	}
}
