package symbolic

import "fmt"

// elist is a sorted event list: a ring buffer (so that popping the head and
// inserting near either end are cheap), plus the entries the linear
// insertion of pseudocode 3 must look at even when it can skip the rest:
// those whose timestamps differ from a concrete one by a non-constant
// expression (sym) and the outstanding timeouts (timers).
type elist struct {
	buf    []*entry // power-of-two ring
	head   int
	n      int
	sym    []*entry // entries with a non-zero vector, in list order
	timers []*entry // outstanding timeouts, in list order
}

func (l *elist) len() int            { return l.n }
func (l *elist) at(k int) *entry     { return l.buf[(l.head+k)&(len(l.buf)-1)] }
func (l *elist) head0() *entry       { return l.buf[l.head] }
func (l *elist) empty() bool         { return l.n == 0 }
func (l *elist) set(k int, e *entry) { l.buf[(l.head+k)&(len(l.buf)-1)] = e }

// reset empties the list, keeping its memory.
func (l *elist) reset() {
	for k := 0; k < l.n; k++ {
		l.set(k, nil)
	}
	l.head, l.n = 0, 0
	clear(l.sym)
	l.sym = l.sym[:0]
	clear(l.timers)
	l.timers = l.timers[:0]
}

// search is the first index k ≥ from with concBefore(e, at(k)), or len.
func (l *elist) search(e *entry, from int) int {
	lo, hi := from, l.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if concBefore(e, l.at(m)) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// index is the position of an entry of the list.
func (l *elist) index(e *entry) int {
	k := l.search(e, 0) - 1
	if k < 0 || l.at(k) != e {
		panic("symbolic: entry not in its list")
	}
	return k
}

func sortedInsert(xs []*entry, e *entry) []*entry {
	lo, hi := 0, len(xs)
	for lo < hi {
		m := (lo + hi) / 2
		if concBefore(e, xs[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	xs = append(xs, nil)
	copy(xs[lo+1:], xs[lo:])
	xs[lo] = e
	return xs
}

func sortedRemove(xs []*entry, e *entry) []*entry {
	for i, x := range xs {
		if x == e {
			copy(xs[i:], xs[i+1:])
			xs[len(xs)-1] = nil
			return xs[:len(xs)-1]
		}
	}
	return xs
}

func (l *elist) track(e *entry) {
	if e.vec != 0 {
		l.sym = sortedInsert(l.sym, e)
	}
	if e.flags&fTimeout != 0 {
		l.timers = sortedInsert(l.timers, e)
	}
}

func (l *elist) untrack(e *entry) {
	if e.vec != 0 {
		l.sym = sortedRemove(l.sym, e)
	}
	if e.flags&fTimeout != 0 {
		l.timers = sortedRemove(l.timers, e)
	}
}

func (l *elist) grow() {
	nb := make([]*entry, max(16, 2*len(l.buf)))
	for k := 0; k < l.n; k++ {
		nb[k] = l.at(k)
	}
	l.buf, l.head = nb, 0
}

// debugCheck (tests) checks list order after every change and deferred
// events before every run of an event.
var debugCheck bool

func (l *elist) check(what string) {
	if !debugCheck {
		return
	}
	for k := 1; k < l.n; k++ {
		if !concBefore(l.at(k-1), l.at(k)) {
			a, b := l.at(k-1), l.at(k)
			panic(fmt.Sprintf("%s: unsorted at %d/%d: %d %v %d | %d %v %d (I=%v) ghost %v %v", what, k, l.n, a.at, a.rec.seq, a.rec.idx, b.at, b.rec.seq, b.rec.idx, a.rec.I, a.flags, b.flags))
		}
	}
}

func (l *elist) insertAt(k int, e *entry) {
	if debugCheck {
		defer l.check("insertAt")
	}
	if l.n == len(l.buf) {
		l.grow()
	}
	mask := len(l.buf) - 1
	if k < l.n/2 {
		// Shift the k entries before the slot one step towards the front.
		l.head = (l.head - 1) & mask
		for i := 0; i < k; i++ {
			l.buf[(l.head+i)&mask] = l.buf[(l.head+i+1)&mask]
		}
	} else {
		for i := l.n; i > k; i-- {
			l.buf[(l.head+i)&mask] = l.buf[(l.head+i-1)&mask]
		}
	}
	l.buf[(l.head+k)&mask] = e
	l.n++
	l.track(e)
}

func (l *elist) removeAt(k int) *entry {
	if debugCheck {
		defer l.check("removeAt")
	}
	mask := len(l.buf) - 1
	e := l.buf[(l.head+k)&mask]
	if k < l.n/2 {
		for i := k; i > 0; i-- {
			l.buf[(l.head+i)&mask] = l.buf[(l.head+i-1)&mask]
		}
		l.buf[l.head] = nil
		l.head = (l.head + 1) & mask
	} else {
		for i := k; i < l.n-1; i++ {
			l.buf[(l.head+i)&mask] = l.buf[(l.head+i+1)&mask]
		}
		l.buf[(l.head+l.n-1)&mask] = nil
	}
	l.n--
	l.untrack(e)
	return e
}

// replace puts g at k instead of the entry there (a ghost for a cancelled
// timer: same timestamp, so the order is unchanged).
func (l *elist) replace(k int, g *entry) {
	old := l.at(k)
	l.untrack(old)
	l.set(k, g)
	l.track(g)
}
