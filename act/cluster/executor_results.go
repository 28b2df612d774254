package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
)

// The Executor's result side: consuming the workers' results, holding
// them until the coordinator merges, reassembling results sent in pieces,
// validating what arrives (a result is checked before it is trusted) and
// the dead letters of results that could not be.

// consume receives results until the executor closes.
func (e *Executor) consume() {
	defer e.wg.Done()
	// Run dispatches the batches it has chosen one after the other at
	// the start (a resume: all those the checkpoint had not merged); the
	// results of an earlier coordinator in the stream are for them, and
	// would be rejected as of unknown batches if read before. Wait until
	// the dispatches pause.
	for e.ctx.Err() == nil {
		e.mu.Lock()
		quiet := time.Since(e.lastDispatch) >= 20*time.Millisecond
		e.mu.Unlock()
		if quiet {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	// One pull subscription for the executor's life (nats.go's Messages),
	// not a Fetch after another: Fetch waits for the server's answer on a
	// timer of its own (500 ms + 1 s here) and then unsubscribes, and a
	// result the server delivered to it meanwhile (a loaded coordinator
	// or server) would be lost to the coordinator until AckWait (30 s)
	// redelivered it, the merge waiting for it meanwhile. A subscription
	// receives whatever the server delivers to it, however late.
	for e.ctx.Err() == nil {
		it, err := e.res.Messages(jetstream.PullMaxMessages(256))
		if err != nil {
			e.log.Warn("receiving results", "err", err)
			select {
			case <-time.After(250 * time.Millisecond):
			case <-e.ctx.Done():
			}
			continue
		}
		for {
			m, err := it.Next(jetstream.NextContext(e.ctx))
			if err != nil {
				if e.ctx.Err() == nil {
					e.log.Warn("receiving results", "err", err)
				}
				break
			}
			if !e.acting() {
				break // e.ctx has ended
			}
			md, mdErr := m.Metadata()
			e.receive(m)
			if mdErr == nil {
				e.mu.Lock()
				if md.NumDelivered > 1 {
					e.stats.Redelivered++
				}
				e.resSeq = max(e.resSeq, md.Sequence.Stream)
				e.mu.Unlock()
			}
		}
		it.Stop()
		select { // the consumer gone, or the server away: do not spin
		case <-time.After(250 * time.Millisecond):
		case <-e.ctx.Done():
		}
	}
}

// acker acknowledges what a result came in: one message, or its parts.
type acker interface {
	Ack() error
	// InProgress tells the server the message is still being worked on:
	// a result held unmerged (the lag's batches wait for their merge)
	// is not delivered again after AckWait (holdResults).
	InProgress() error
}

// acks acknowledges the parts of a result.
type acks []jetstream.Msg

func (a acks) Ack() error {
	var err error
	for _, m := range a {
		err = errors.Join(err, m.Ack())
	}
	return err
}

func (a acks) InProgress() error {
	var err error
	for _, m := range a {
		err = errors.Join(err, m.InProgress())
	}
	return err
}

// holdResults tells the server, every AckWait/3, that the results the
// coordinator holds unmerged are in progress. Without it a result held
// past AckWait (a campaign whose lag of 8 batches takes longer than that
// to merge) came again, a duplicate: 201 of 1,500 results in a run of
// examples/make-run.yaml (1,500 simulations, 2 parts, a host of 2 slots),
// none with it.
func (e *Executor) holdResults() {
	defer e.wg.Done()
	tick := time.NewTicker(max(e.opt.AckWait/3, time.Millisecond))
	defer tick.Stop()
	var held []acker
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-tick.C:
		}
		held = held[:0]
		e.mu.Lock()
		for _, m := range e.got {
			if m != nil {
				held = append(held, m)
			}
		}
		for _, p := range e.parts {
			held = append(held, p.msgs)
		}
		e.mu.Unlock()
		for _, m := range held {
			if !e.acting() {
				return
			}
			_ = m.InProgress() // a message already acked (merged meanwhile) answers nothing
		}
	}
}

// partial is a result arriving in parts.
type partial struct {
	n     int
	parts [][]byte
	msgs  acks
	have  int
	size  int
}

// deferPart is assemble's answer for a part that must come again later:
// the parts held are at the coordinator's limit.
const deferPart = "deferred"

// deferFor is how long a deferred part waits before it is redelivered.
const deferFor = 500 * time.Millisecond

// receive validates one message of the results stream.
func (e *Executor) receive(m jetstream.Msg) {
	var r act.Result
	var reason string
	var ack acker = m
	data, part := m.Data(), -1
	if m.Headers().Get(hdrPart) != "" {
		var parts acks
		if data, part, parts, reason = e.assemble(m); reason == "" && data == nil {
			return // more parts to come
		}
		if reason == deferPart && e.acting() {
			_ = m.NakWithDelay(deferFor)
		}
		if reason == deferPart {
			return
		}
		if parts != nil {
			ack = parts
		}
	}
	if reason == "" {
		r, reason = e.validate(data, m.Headers(), ack, part)
	}
	if reason != "" {
		if reason != "duplicate" && reason != "stale" {
			e.noteRejected(reason, len(data))
		}
		if e.acting() {
			_ = ack.Ack()
		}
		return
	}
	select {
	case e.out <- r:
	case <-e.ctx.Done():
	}
}

// assemble keeps a part of a result; once it has them all, it returns the
// result's body, its index (the parts') and its messages.
func (e *Executor) assemble(m jetstream.Msg) ([]byte, int, acks, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.seen++
	var f [4]uint64
	fields := strings.Split(m.Headers().Get(hdrPart), "/")
	ok := len(fields) == 4
	for i := 0; ok && i < 4; i++ {
		var err error
		bits := 62
		if i == 0 {
			bits = 64 // a batch id may carry retryBit
		}
		f[i], err = strconv.ParseUint(fields[i], 10, bits)
		ok = err == nil
	}
	idx, i, n := int(f[1]), int(f[2]), int(f[3])
	var c *chunk
	if ok {
		c = e.lookup(f[0])
	}
	data := m.Data()
	reason := ""
	switch {
	case m.Headers().Get(hdrCampaign) != e.opt.ID:
		reason = "another campaign"
	case !ok || n < 2 || i >= n || n > e.opt.MaxResult/1024+1:
		reason = "malformed part"
	case c == nil && idx < e.merged:
		reason = "stale"
	case c == nil:
		reason = "unknown batch"
	case idx < c.first || idx >= c.first+c.n:
		reason = "index outside its batch"
	case m.Headers().Get(hdrWork) != c.sum:
		reason = "configuration does not match its batch"
	}
	if _, dup := e.got[idx]; reason == "" && (dup || idx < e.merged) {
		reason = "duplicate"
	}
	p := e.parts[idx]
	switch {
	case reason != "":
	case p == nil && e.partB+len(data) > e.partLimit:
		// Genuine results' parts may come interleaved from many hosts:
		// this one comes again later, when those held are complete
		// (theirs are always taken, so they complete).
		e.stats.Deferred++
		return nil, 0, nil, deferPart
	case p == nil:
		p = &partial{n: n, parts: make([][]byte, n)}
		e.parts[idx] = p
	case p.n != n:
		reason = "malformed part"
	case p.parts[i] != nil:
		reason = "duplicate"
	}
	if reason == "" && p.size+len(data) > e.opt.MaxResult {
		reason = "oversized"
	}
	if reason != "" {
		e.countRejected(reason)
		return nil, 0, nil, reason
	}
	p.parts[i], p.msgs = data, append(p.msgs, m)
	p.have++
	p.size += len(data)
	e.partB += len(data)
	if p.have < p.n {
		return nil, 0, nil, ""
	}
	delete(e.parts, idx)
	e.partB -= p.size
	e.stats.Assembled++
	return bytes.Join(p.parts, nil), idx, p.msgs, ""
}

// countRejected counts a message rejected for reason (e.mu held).
func (e *Executor) countRejected(reason string) {
	switch reason {
	case "duplicate":
		e.stats.Duplicates++
	case "stale":
		e.stats.Stale++
	default:
		e.stats.Rejected[reason]++
	}
}

// validate checks a result's message, or the result of configuration
// part put together from parts (assemble counted their messages; -1 for
// one message), and records ack as what to acknowledge once it is merged.
func (e *Executor) validate(data []byte, hdr nats.Header, ack acker, part int) (act.Result, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if part < 0 {
		e.seen++
	}
	reject := func(reason string) (act.Result, string) {
		e.countRejected(reason)
		return act.Result{}, reason
	}
	if len(data) > e.opt.MaxResult {
		return reject("oversized")
	}
	if hdr.Get(hdrCampaign) != e.opt.ID {
		return reject("another campaign")
	}
	msg, err := act.DecodeMessage(data)
	if err != nil {
		return reject("malformed")
	}
	r, ok := msg.(act.Result)
	if !ok {
		return reject("not a result")
	}
	if r.BatchID >= retryBit<<1 || r.Index < 0 {
		return reject("unknown batch")
	}
	if part >= 0 && r.Index != part {
		return reject("parts of another configuration")
	}
	c := e.lookup(r.BatchID)
	switch {
	case c == nil && r.Index < e.merged:
		return reject("stale")
	case c == nil:
		return reject("unknown batch")
	case r.Index < c.first || r.Index >= c.first+c.n:
		return reject("index outside its batch")
	case hdr.Get(hdrWork) != c.sum:
		return reject("configuration does not match its batch")
	}
	if _, dup := e.got[r.Index]; dup || r.Index < e.merged {
		return reject("duplicate")
	}
	// From here on the result is one of the chunk's, spoiled by its
	// content: if its host acked the chunk, no other comes.
	spoil := func(reason string) (act.Result, string) {
		e.spoil(r.Index, c, reason)
		return reject(reason)
	}
	switch {
	case r.StatesDropped != 0 && (len(r.States) != 0 || r.Shares != nil || r.StatesDropped <= e.opt.MaxResult):
		// A host drops the states of a result over MaxResult only.
		return spoil("states dropped under the limit")
	case len(r.States) == 0 && r.Fault == nil && r.StatesDropped == 0 && r.Shares == nil:
		return spoil("no states")
	case e.opt.Parts == 0 && r.Shares != nil:
		return spoil("shares without store parts")
	case e.opt.Parts > 0 && len(r.States) != 0:
		return spoil("states not sent to the store parts")
	case r.Shares != nil && !validShares(r.Shares, e.opt.Parts):
		return spoil("shares")
	case len(r.Mean) != 0 && len(r.Mean) != len(e.space.Vars):
		return spoil("mean state of another space")
	case len(r.Hits) > 64*max(len(e.conds), 1):
		return spoil("hits")
	}
	for _, h := range r.Hits {
		if !e.conds[h.Condition] {
			return spoil("hit of an unknown condition")
		}
	}
	// Decoded here, once: Run merges this batch (Result.Decoded).
	if len(r.States) > 0 {
		b := e.batch()
		if b.UnmarshalBinary(r.States) != nil {
			e.Recycle(b)
			return spoil("states outside the campaign's space")
		}
		r.Decoded, r.States = b, nil
	}
	e.got[r.Index] = ack
	e.stats.Results++
	if r.StatesDropped > 0 {
		e.stats.Dropped++
		e.log.Warn("capped: a result over max_result came without its states; its coverage is not merged",
			"config", r.Index, "bytes", r.StatesDropped, "max_result", e.opt.MaxResult)
	}
	return r, ""
}

// deadLetter handles a chunk that reached MaxDeliver deliveries without
// an ack. Usually one configuration kills the hosts that run it, and the
// others are innocent: so a chunk of several configurations is not charged
// a fault; each of its configurations without a result is published again
// alone (single), and only a configuration alone that reaches MaxDeliver
// becomes a crash fault. The innocent ones run as anywhere else, and Run
// merges every result in configuration order whatever chunk brought it.
func (e *Executor) deadLetter(m *nats.Msg) {
	var adv struct {
		Stream     string `json:"stream"`
		StreamSeq  uint64 `json:"stream_seq"`
		Deliveries uint64 `json:"deliveries"`
	}
	if err := json.Unmarshal(m.Data, &adv); err != nil {
		return
	}
	e.mu.Lock()
	c := e.bySeq[adv.StreamSeq]
	// The message goes from the stream now; a repeated advisory must not
	// charge or retry it twice.
	delete(e.bySeq, adv.StreamSeq)
	var lost []act.Result
	var again []*chunk
	var err error
	if c != nil {
		e.stats.DeadLetter++
		for i := c.first; i < c.first+c.n && err == nil; i++ {
			if _, ok := e.got[i]; ok || i < e.merged {
				continue
			}
			if c.n > 1 {
				var s *chunk
				if s, err = e.single(i); s != nil && s.seq == 0 && s.body != nil {
					again = append(again, s)
				}
				continue
			}
			e.got[i] = nil
			detail := fmt.Sprintf("configuration %d delivered %d times to worker hosts without a result (dead letter): a host died on it each time", i, adv.Deliveries)
			if c.of != nil {
				detail += fmt.Sprintf(" (run alone after its chunk of configurations %d–%d was a dead letter)", c.of.first, c.of.first+c.of.n-1)
			}
			lost = append(lost, act.Result{BatchID: c.id, Index: i, Fault: &corpus.Finding{Kind: corpus.FaultCrash, Detail: detail}})
		}
		e.stats.Retried += len(again)
		e.stats.Crashes += len(lost)
	}
	e.mu.Unlock()
	if c == nil {
		return
	}
	if err != nil {
		e.failWith(err)
		return
	}
	if len(lost) > 0 {
		e.log.Error("dead letter: configuration charged a crash fault", "config", c.first, "deliveries", adv.Deliveries)
	} else {
		e.log.Warn("dead letter: chunk given up, its configurations without a result published again one by one",
			"first", c.first, "deliveries", adv.Deliveries, "retried", len(again))
	}
	if !e.acting() {
		return
	}
	dctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
	_ = e.work.DeleteMsg(dctx, adv.StreamSeq)
	cancel()
	for _, s := range again {
		select {
		case e.pubq <- s:
		case <-e.ctx.Done():
			return
		}
	}
	for _, r := range lost {
		select {
		case e.out <- r:
		case <-e.ctx.Done():
			return
		}
	}
}
