package cluster

// What a store part acks, and when. A share merged is acked only when the
// next merge request comes: the coordinator asks for merge S+1 after it
// has acked the results of merge S (act.Run calls Executor.Merged after
// each batch's merge). A part that acked a share as it merged it lost it
// when the coordinator then died before acking the share's result (kill
// -9), or gave the merge up because another part was lost: the
// coordinator that continued found the result in the results stream,
// published its configuration no more, and waited for a share no longer
// in the states stream ("store part 0: merge: 64 of 64 shares not
// received yet after 2m0s" in bench/cluster-chaos.sh, exit 3; issue 47).
// Acked one merge later, a share whose result was acked and lost with a
// checkpoint not written is run and published again with its
// configuration, and the one the part still held comes again too: a
// duplicate, acked with the other.

// settled acks (or, with ack false, gives back: a load drops what was
// merged) the last merge's shares (p.settle).
func (p *partState) settled(ack bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.settle {
		if ack {
			_ = m.Ack()
		} else {
			_ = m.Nak()
		}
	}
	p.settle = nil
}

// retire forgets the candidates of key, merged, keeping their messages
// to ack at the next merge (p.mu held).
func (p *partState) retire(key string, cs []*candidate) {
	for _, c := range cs {
		p.settle = append(p.settle, c.msgs...)
		c.msgs = nil
	}
	p.drop(key, cs)
}

// release gives back every share held, to be delivered again at once,
// and the last merge's.
func (p *partState) release() {
	p.settled(false)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, cs := range p.shares {
		for _, c := range cs {
			for _, m := range c.msgs {
				_ = m.Nak()
			}
		}
	}
	for _, ps := range p.pieces {
		for _, m := range ps.msgs {
			_ = m.Nak()
		}
	}
	for _, cs := range p.shares {
		for _, c := range cs {
			c.dropped = true
		}
	}
	p.shares, p.pieces, p.held = map[string][]*candidate{}, map[string]*pieces{}, 0
}

// drop acks and forgets the candidates of key (p.mu held).
func (p *partState) drop(key string, cs []*candidate) {
	for _, c := range cs {
		for _, m := range c.msgs {
			_ = m.Ack()
		}
		p.held -= len(c.data) + c.extra
		c.dropped, c.extra = true, 0
	}
	delete(p.shares, key)
}
