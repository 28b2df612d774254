package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A result rejected for its content (states that do not decode, a mean of
// the wrong length, a hit of an unknown condition) names a configuration
// of a chunk the coordinator published, with the chunk's sum: it came from
// a worker host, or from a publisher that copied one. When the genuine
// result still comes, the rejection costs nothing. But if the host that
// sent it then acked its chunk, nothing brings the configuration back: the
// work stream forgot the chunk, and Run would wait for its result for
// ever. Only a host's bug makes such results (hosts check their worker
// processes' states before they publish them), and the cure is the dead
// letter's: the configuration is published again alone, and a build that
// keeps spoiling it stops the campaign with an error (exit 3), since the
// bug is actfuzz's, not the subject's.
//
// The coordinator publishes it again only once it knows no result of the
// configuration can come any more: its chunk is gone from the work stream
// (acked; a host publishes a chunk's results before it acks it), and every
// result published before that was received (the results stream's last
// sequence at that moment is at most the highest one received: first
// deliveries come in stream order).

// maxReissues bounds the times a configuration whose results are rejected
// for their content is published again before the campaign stops.
const maxReissues = 3

// A result can also be lost after its host acked its chunk: the server
// acknowledged it and then lost it (a crash of its machine before it
// synced: sync_interval), or an operator purged it. Run would then wait
// for ever too. So the coordinator watches the lowest configuration it
// awaits (the one Run waits for) the same way, as "lost" (lostReason):
// once its chunk is gone from the work stream and every result published
// before was received, and it still has no result AckWait later (a part
// of a result deferred, deferPart, comes again meanwhile), it is
// published again alone. Results from a later delivery are duplicates,
// as any redelivery's.
const lostReason = "no result came"

// spoiled is the state of a configuration whose result was rejected for its
// content.
type spoiled struct {
	reason string
	c      *chunk    // the chunk the rejected result came from (or, lost, the last that held it)
	upto   uint64    // once c is gone: the results stream's last sequence then
	since  time.Time // when upto was set
	tries  int       // publications alone so far
}

// spoil records that a result of configuration i, of chunk c, was rejected
// for reason, its content (e.mu held).
func (e *Executor) spoil(i int, c *chunk, reason string) {
	s := e.spoiled[i]
	if s == nil {
		s = &spoiled{}
		e.spoiled[i] = s
	}
	s.reason, s.c, s.upto = reason, c, 0
}

// watchSpoiled publishes again, alone, each configuration whose result was
// rejected for its content and can no longer come.
func (e *Executor) watchSpoiled() {
	defer e.wg.Done()
	tick := time.NewTicker(min(max(e.opt.AckWait/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		e.mu.Lock()
		e.watchLowest()
		var watched []int
		for i := range e.spoiled {
			if _, ok := e.got[i]; ok || i < e.merged {
				delete(e.spoiled, i)
			} else {
				watched = append(watched, i)
			}
		}
		e.mu.Unlock()
		slices.Sort(watched)
		for _, i := range watched {
			if err := e.recheck(i); err != nil {
				e.failWith(err)
				return
			}
		}
	}
}

// recheck moves configuration i's spoiled state on: it learns that its
// chunk is gone, then that every result sent before was received, and
// then publishes it again alone; or it fails after maxReissues.
func (e *Executor) recheck(i int) error {
	e.mu.Lock()
	s := e.spoiled[i]
	seq, upto, received := s.c.seq, s.upto, e.resSeq
	e.mu.Unlock()
	if upto == 0 {
		if seq == 0 {
			return nil // not acknowledged by the server yet: the next tick
		}
		ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
		defer cancel()
		if _, err := e.work.GetMsg(ctx, seq); !errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil // still with a host, or waiting for one (or the server away)
		}
		info, err := e.results.Info(ctx)
		if err != nil {
			return nil
		}
		e.mu.Lock()
		s.upto, s.since = max(info.State.LastSeq, 1), time.Now()
		upto = s.upto
		e.mu.Unlock()
	}
	if received < upto {
		return nil // results sent before the chunk's ack still on their way
	}
	e.mu.Lock()
	if _, ok := e.got[i]; ok || i < e.merged {
		e.mu.Unlock()
		return nil
	}
	if s.reason == lostReason && time.Since(s.since) < e.opt.AckWait {
		e.mu.Unlock()
		return nil
	}
	if s.tries == maxReissues && s.reason == lostReason {
		e.mu.Unlock()
		return fmt.Errorf("configuration %d: published %d times, and each time no result came after its chunk was acked: results lost by the server, or a worker host's bug",
			i, maxReissues+1)
	}
	if s.tries == maxReissues {
		e.mu.Unlock()
		return fmt.Errorf("configuration %d: %d results rejected for their content (the last: %s), each from a host that then acked its chunk: a worker host's bug, not the subject's",
			i, maxReissues+1, s.reason)
	}
	s.tries++
	reason, try := s.reason, s.tries
	// Watched as lost from now on, in case its new chunk's result is
	// lost too; a rejection of that result arms it again (spoil).
	s.reason, s.upto = lostReason, 0
	// A chunk of i alone, new: one published before (a dead letter's, or
	// this path's) was taken.
	delete(e.chunks, retryBit|uint64(i))
	c, err := e.single(i)
	if c != nil {
		c.attempt = s.tries
		s.c = c
		e.stats.Reissued++
	}
	e.mu.Unlock()
	if err != nil || c == nil {
		return err // c nil: no chunk holds i any more (merged meanwhile)
	}
	if reason == lostReason {
		e.log.Warn("no result came, its chunk acked: configuration published again alone", "config", i, "try", try)
	} else {
		e.log.Warn("a result rejected for its content, its chunk acked: configuration published again alone",
			"config", i, "reason", reason, "try", try)
	}
	select {
	case e.pubq <- c:
	case <-e.ctx.Done():
	}
	return nil
}

// watchLowest watches as lost the lowest configuration dispatched and
// not merged that has no result (the one Run waits for), unless it is
// watched already (e.mu held).
func (e *Executor) watchLowest() {
	i := -1
	for _, ch := range e.chunks {
		for j := max(ch.first, e.merged); j < ch.first+ch.n && (i < 0 || j < i); j++ {
			if _, ok := e.got[j]; !ok {
				i = j
				break
			}
		}
	}
	if i < 0 || e.parts[i] != nil {
		return // nothing awaited, or its result is arriving in parts
	}
	// The last chunk that holds it: a configuration published again
	// alone (a dead letter's retry) is in a chunk of its own too, and
	// it is that chunk's result that may come.
	var c *chunk
	for _, ch := range e.chunks {
		if ch.first <= i && i < ch.first+ch.n && (c == nil || ch.seq > c.seq || ch.seq == 0) {
			c = ch
		}
	}
	switch s := e.spoiled[i]; {
	case s == nil:
		e.spoiled[i] = &spoiled{reason: lostReason, c: c}
	case s.reason == lostReason && s.c != c:
		s.c, s.upto = c, 0
	}
}
