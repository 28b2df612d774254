package snapshot

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
)

// ccai's optional interface is this package's Saver (same method set).
var _ Saver = ccai.StateSaver(nil)

type ev struct {
	at  int
	pkt *pkt
}

type pkt struct {
	id      int
	arrival ev // queued by address, as sim.Packet.Arrival is
	next    *pkt
}

type world struct {
	queue []*ev
	free  *pkt
	byID  map[int]*pkt
	boxed any
	ring  [4]int
	self  *world
	saver *counter
	tbl   *[3]int    `snapshot:"shared"`
	hook  func() int `snapshot:"shared"`
}

type counter struct{ n, saves int }

func (c *counter) SaveState() func() {
	c.saves++
	n := c.n
	return func() { c.n = n }
}

func newWorld() *world {
	w := &world{byID: map[int]*pkt{}, saver: &counter{}, tbl: &[3]int{1, 2, 3}}
	w.self = w
	for i := 0; i < 3; i++ {
		p := &pkt{id: i}
		p.arrival = ev{at: 10 * i, pkt: p}
		w.queue = append(w.queue, &p.arrival)
		w.byID[i] = p
	}
	w.free = &pkt{id: 100, next: &pkt{id: 101}}
	w.boxed = struct{ p *pkt }{w.byID[0]}
	return w
}

// mutate changes everything Take saved, and some of what it did not.
func mutate(w *world) {
	w.queue[0].at = 999
	w.queue = append(w.queue[:1], &ev{at: 5})
	w.byID[1].arrival.at = -1
	w.byID[7] = &pkt{id: 7}
	delete(w.byID, 2)
	w.free = w.free.next
	w.ring[2] = 42
	w.boxed.(struct{ p *pkt }).p.id = 55
	w.saver.n = 9
	w.tbl[0] = 77 // shared: not restored
}

func check(t *testing.T, w *world) {
	t.Helper()
	if w.self != w || len(w.queue) != 3 || w.free.id != 100 || w.free.next.id != 101 || w.ring[2] != 0 {
		t.Fatalf("not restored: %+v", w)
	}
	for i, e := range w.queue {
		if e.at != 10*i || e.pkt.id != i || &e.pkt.arrival != e || w.byID[i] != e.pkt {
			t.Fatalf("event %d: at %d pkt %d, aliasing lost", i, e.at, e.pkt.id)
		}
	}
	if len(w.byID) != 3 || w.byID[7] != nil {
		t.Fatalf("map not restored: %v", w.byID)
	}
	if w.saver.n != 0 {
		t.Fatalf("saver not restored: %d", w.saver.n)
	}
}

func TestRoundTrip(t *testing.T) {
	w := newWorld()
	s, err := Take(w)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		mutate(w)
		s.Restore()
		check(t, w)
	}
	if w.tbl[0] != 77 {
		t.Fatalf("a shared field's referent was restored: %v", w.tbl)
	}
	if w.saver.saves != 1 {
		t.Fatalf("SaveState called %d times, want 1", w.saver.saves)
	}
}

type withFunc struct {
	inner struct{ f func() }
}

type withChan struct{ c chan int }

type nilSaver struct{ x int }

func (nilSaver) SaveState() func() { return nil }

func TestRefuses(t *testing.T) {
	f := &withFunc{}
	f.inner.f = func() {}
	var boxedFunc any = func() {}
	for _, tc := range []struct {
		root any
		want string
	}{
		{f, "inner.f: a func value"},
		{&withChan{c: make(chan int)}, ".c: a channel"},
		{&struct{ s *nilSaver }{&nilSaver{}}, "cannot be saved"},
		{&boxedFunc, "a func value"},
		{&map[int]func(){1: func() {}}, "a func value"},
		{world{}, "not a non-nil pointer"},
	} {
		_, err := Take(tc.root)
		var se *Error
		if !errors.As(err, &se) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Take(%T) = %v, want an error with %q", tc.root, err, tc.want)
		}
	}
	// Nil funcs and channels are plain values.
	if _, err := Take(&withFunc{}, &withChan{}); err != nil {
		t.Fatal(err)
	}
}

// A sub-slice of a saved array, taken before or after the whole.
func TestSubSlices(t *testing.T) {
	backing := make([]int, 8)
	for i := range backing {
		backing[i] = i
	}
	root := &struct{ head, all []int }{backing[:2], backing}
	s, err := Take(root)
	if err != nil {
		t.Fatal(err)
	}
	for i := range backing {
		backing[i] = -1
	}
	root.head = root.head[:0]
	s.Restore()
	for i, v := range root.all {
		if v != i {
			t.Fatalf("all[%d] = %d after restore", i, v)
		}
	}
	if len(root.head) != 2 || &root.head[0] != &root.all[0] {
		t.Fatal("head not restored onto the same array")
	}
}

// ccaiLike implements ccai.StateSaver's method set without importing
// anything: Take must use it (ccai imports nothing of ours).
type ccaiLike struct {
	n    int
	tick func() // state behind a closure: a walk cannot save it
}

func (c *ccaiLike) SaveState() (restore func()) {
	n := c.n
	return func() { c.n = n }
}

func TestSaverInsteadOfWalk(t *testing.T) {
	c := &ccaiLike{n: 3}
	c.tick = func() { c.n++ }
	root := &struct{ alg any }{c}
	s, err := Take(root)
	if err != nil {
		t.Fatal(err)
	}
	c.tick()
	s.Restore()
	if c.n != 3 {
		t.Fatalf("n = %d after restore", c.n)
	}
}

// A pointer to a slice's first element and the slice: one object and one
// array at the same address, of the same element type.
func TestPointerIntoSlice(t *testing.T) {
	xs := []pkt{{id: 1}, {id: 2}}
	root := &struct {
		first *pkt
		all   []pkt
	}{&xs[0], xs}
	s, err := Take(root)
	if err != nil {
		t.Fatal(err)
	}
	xs[0].id, xs[1].id = 10, 20
	s.Restore()
	if root.first.id != 1 || root.all[1].id != 2 {
		t.Fatalf("not restored: %d %d", root.first.id, root.all[1].id)
	}
}

// Pointer-free objects are restored by copying bytes; strings are not
// pointer-free.
func TestRawAndStrings(t *testing.T) {
	nums := &[4]int{1, 2, 3, 4}
	named := &struct {
		n    int
		name string
	}{1, "one"}
	s, err := Take(nums, named)
	if err != nil {
		t.Fatal(err)
	}
	nums[2], named.n, named.name = 0, 2, strings.Repeat("x", 3)
	s.Restore()
	if *nums != [4]int{1, 2, 3, 4} || named.n != 1 || named.name != "one" {
		t.Fatalf("not restored: %v %+v", *nums, *named)
	}
}

// A time zone is never saved: a time.Time restored keeps its zone, and
// time.Local, a package-level variable other goroutines read, is never
// written back (netenv.Session's start time reached it, and the symbolic
// watchdog test's two explorations raced on it).
func TestTimeZoneNotSaved(t *testing.T) {
	type clocks struct {
		local, fixed time.Time
	}
	zone := time.FixedZone("UTC+1", 3600)
	c := &clocks{local: time.Now(), fixed: time.Date(2026, 11, 25, 2, 0, 0, 0, zone)}
	want := *c
	s, err := Take(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range s.objs {
		if o.typ == reflect.TypeFor[time.Location]() {
			t.Fatalf("a time.Location was saved at %p", o.addr)
		}
	}
	c.local, c.fixed = time.Time{}, time.Now().UTC()
	s.Restore()
	if !c.local.Equal(want.local) || c.local.Location() != time.Local || !c.fixed.Equal(want.fixed) || c.fixed.Location() != zone {
		t.Fatalf("restored %v, %v; want %v, %v", c.local, c.fixed, want.local, want.fixed)
	}
}
