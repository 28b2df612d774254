// Package snapshot saves the state of a paused simulation and writes it
// back, so that the symbolic back-end can run every branch of a window from
// the window's start instead of from time zero (issue 22, item 3).
//
// # How
//
// [Take] walks everything reachable from its roots (pointers, slices,
// maps, interfaces; unexported fields too) and keeps a copy of every object
// it reaches, keyed by address. [Snapshot.Restore] writes each copy back to
// the address it came from. Nothing moves: every pointer in the restored
// state (a queued event inside a packet, a closure's receiver, a link
// reached from two paths) points where it pointed when the snapshot was
// taken, at an object holding what it held then. Aliasing, interior
// pointers and cycles need no bookkeeping, and a closure that captured an
// object of the graph still sees that object. Objects allocated after the
// snapshot become garbage at the next Restore; the snapshot keeps the ones
// it saved alive.
//
// What a walk cannot see is state behind a func value: a closure's captured
// variables. [Take] therefore refuses a non-nil func, chan or
// unsafe.Pointer, unless
//
//   - the struct field holding it is tagged `snapshot:"shared"`: its value is
//     restored, but what it refers to is not saved, because it is immutable
//     during a run (a compiled table, a shipped trace) or reachable and saved
//     through another path, or its owner passes it to Take as a root (the
//     symbolic back-end's delay hooks do); or
//   - an enclosing object implements [Saver]: it saves itself.
//
// Refusals are errors naming the path to the value, so that a new closure in
// the simulator makes snapshots fail loudly (the symbolic back-end then
// re-simulates every branch from time zero, which is correct and slower),
// never silently restore half a state. Package-level variables are not
// saved either: the simulator has none that a run writes. Nor is a time
// zone ([time.Location], which a time.Time's wall clock points to): it is
// immutable, and time.Local is a package-level variable that other
// goroutines read; restoring it, even with the bytes it holds, raced with
// them (netenv.Session's start time reached it).
//
// A tag is a claim the walk cannot check; the tests that matter are end to
// end (netenv's TestSessionSnapshot over every CCAI, topology and link
// model; the symbolic back-end's TestSnapshotAgrees), and they fail when a
// tag hides state (tagging one PRNG fails 160 cases of the first).
//
// Take and Restore must run while the simulation is paused between events
// and no other goroutine touches it. Memory that the roots reach but that
// is not the run's own (a global table behind a slice, say) would be
// written back by Restore, with the bytes it already holds; tag such fields
// shared instead.
package snapshot

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unsafe"
)

// Saver is implemented by an object that saves its own state: Take calls
// SaveState instead of walking the object, and Restore calls the function it
// returned. A nil function means the object cannot be saved; Take then
// fails. The method set is all that matters (ccai.StateSaver has the same
// one), so that packages that import nothing of ours can implement it.
type Saver interface {
	SaveState() (restore func())
}

// Tag is the struct tag value that marks a field whose referents are not
// saved (see the package documentation).
const Tag = "shared"

// Snapshot is the saved state of everything reachable from a set of roots.
type Snapshot struct {
	objs   []object
	maps   []savedMap
	savers []func()
	bytes  int
}

// object is one saved memory region: its address, and a copy.
type object struct {
	addr unsafe.Pointer
	cp   reflect.Value // pointer to the copy (struct, scalar or array)
	typ  reflect.Type
	// raw: the type holds no pointer the garbage collector sees (strings
	// count), so Restore copies its bytes without write barriers.
	raw bool
}

// savedMap is a map's entries; restoring empties the map and refills it.
type savedMap struct {
	m  reflect.Value // the map itself (not the field holding it)
	cp reflect.Value
}

// Error says which value made Take fail.
type Error struct {
	Path string
	Why  string
}

func (e *Error) Error() string { return fmt.Sprintf("snapshot: %s: %s", e.Path, e.Why) }

// Take saves everything reachable from roots, each a non-nil pointer.
func Take(roots ...any) (*Snapshot, error) {
	for i, r := range roots {
		if v := reflect.ValueOf(r); v.Kind() != reflect.Pointer || v.IsNil() {
			return nil, &Error{Path: fmt.Sprintf("root %d", i), Why: fmt.Sprintf("%T is not a non-nil pointer", r)}
		}
	}
	w := newWalker(false)
	if err := w.roots(roots); err != nil {
		// Walk again, depth first with the path, to name the value.
		return nil, newWalker(true).roots(roots)
	}
	return w.snap, nil
}

// Restore writes the saved state back. It may be called any number of
// times.
func (s *Snapshot) Restore() {
	for i := range s.objs {
		o := &s.objs[i]
		if o.raw {
			n := int(o.typ.Size())
			copy(unsafe.Slice((*byte)(o.addr), n), unsafe.Slice((*byte)(o.cp.UnsafePointer()), n))
			continue
		}
		reflect.NewAt(o.typ, o.addr).Elem().Set(o.cp.Elem())
	}
	for i := range s.maps {
		m := &s.maps[i]
		m.m.Clear()
		it := m.cp.MapRange()
		for it.Next() {
			m.m.SetMapIndex(it.Key(), it.Value())
		}
	}
	for _, f := range s.savers {
		f()
	}
}

// Size is the number of objects saved (maps and savers included) and the
// bytes Restore copies (map entries not counted).
func (s *Snapshot) Size() (objects, bytes int) {
	return len(s.objs) + len(s.maps) + len(s.savers), s.bytes
}

type key struct {
	addr unsafe.Pointer
	typ  reflect.Type
}

// walker finds and saves everything reachable. Its fast mode walks objects
// from a work list, without paths; when it fails, Take walks again in trace
// mode, recursively, keeping the path for the error.
type walker struct {
	snap  *Snapshot
	seen  map[key]bool
	arr   map[key]int // slices' backing arrays (by element type): index in snap.objs
	maps  map[unsafe.Pointer]bool
	todo  []key // saved objects not walked yet (fast mode)
	trace bool
	path  []step
	info  map[reflect.Type]*typeInfo
}

// typeInfo is what a walk needs of a type, computed once.
type typeInfo struct {
	ptrs   bool        // a value can refer to other memory (strings aside: immutable)
	saver  bool        // a pointer to it implements Saver
	gc     bool        // gcPointers
	fields []fieldInfo // struct: the untagged fields with pointers
}

type fieldInfo struct {
	name string
	off  uintptr
	typ  reflect.Type
	info *typeInfo
}

// errFast is the fast mode's failure: Take then walks again with paths.
var errFast = errors.New("snapshot: refused")

func newWalker(trace bool) *walker {
	return &walker{snap: &Snapshot{}, seen: map[key]bool{}, arr: map[key]int{}, maps: map[unsafe.Pointer]bool{}, trace: trace, info: map[reflect.Type]*typeInfo{}}
}

func (w *walker) roots(roots []any) error {
	for _, r := range roots {
		v := reflect.ValueOf(r)
		w.path = append(w.path[:0], step{name: fmt.Sprintf("(%s)", v.Type())})
		if err := w.object(v.UnsafePointer(), v.Type().Elem()); err != nil {
			return err
		}
		for len(w.todo) > 0 {
			k := w.todo[len(w.todo)-1]
			w.todo = w.todo[:len(w.todo)-1]
			if err := w.walk(k.addr, k.typ, w.typeInfo(k.typ)); err != nil {
				return err
			}
		}
	}
	return nil
}

// step is one step of a path: a field or type name, or an index (name "").
type step struct {
	name string
	idx  int
}

func (w *walker) push(name string, idx int) {
	if w.trace {
		w.path = append(w.path, step{name, idx})
	}
}

func (w *walker) pop() {
	if w.trace {
		w.path = w.path[:len(w.path)-1]
	}
}

var saverType = reflect.TypeFor[Saver]()

// locationType is time.Location's: never saved (see the package doc).
var locationType = reflect.TypeFor[time.Location]()

func (w *walker) fail(why string) error {
	if !w.trace {
		return errFast
	}
	var b strings.Builder
	for _, s := range w.path {
		if s.name == "" {
			fmt.Fprintf(&b, "[%d]", s.idx)
		} else {
			b.WriteString(s.name)
		}
	}
	return &Error{Path: b.String(), Why: why}
}

func (w *walker) typeInfo(t reflect.Type) *typeInfo {
	if ti, ok := w.info[t]; ok {
		return ti
	}
	// A type on a cycle refers to memory (a cycle goes through a
	// pointer, slice, map or interface), so true is right while its
	// fields are worked out.
	ti := &typeInfo{ptrs: true, saver: reflect.PointerTo(t).Implements(saverType), gc: gcPointers(t)}
	w.info[t] = ti
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
	case reflect.Array:
		ti.ptrs = t.Len() > 0 && w.typeInfo(t.Elem()).ptrs
	case reflect.Struct:
		ti.ptrs = false
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Tag.Get("snapshot") == Tag {
				continue
			}
			if fi := w.typeInfo(f.Type); fi.ptrs {
				ti.fields = append(ti.fields, fieldInfo{name: "." + f.Name, off: f.Offset, typ: f.Type, info: fi})
				ti.ptrs = true
			}
		}
	default:
		ti.ptrs = false
	}
	return ti
}

// object saves the value of type t at addr and walks it (trace mode) or
// queues it to be walked.
func (w *walker) object(addr unsafe.Pointer, t reflect.Type) error {
	if t.Size() == 0 || t == locationType {
		return nil
	}
	k := key{addr, t}
	if w.seen[k] {
		return nil
	}
	w.seen[k] = true
	ti := w.typeInfo(t)
	if ti.saver {
		f := reflect.NewAt(t, addr).Interface().(Saver).SaveState()
		if f == nil {
			return w.fail(fmt.Sprintf("%s cannot be saved (its SaveState returned nil)", t))
		}
		w.snap.savers = append(w.snap.savers, f)
		return nil
	}
	cp := reflect.New(t)
	cp.Elem().Set(reflect.NewAt(t, addr).Elem())
	w.snap.objs = append(w.snap.objs, object{addr: addr, cp: cp, typ: t, raw: !ti.gc})
	w.snap.bytes += int(t.Size())
	if !ti.ptrs {
		return nil
	}
	if !w.trace {
		w.todo = append(w.todo, k)
		return nil
	}
	return w.walk(addr, t, ti)
}

// array saves the n elements of type t at addr (a slice's backing array
// up to its capacity: elements past the length may be resliced back in).
func (w *walker) array(addr unsafe.Pointer, t reflect.Type, n int) error {
	at := reflect.ArrayOf(n, t)
	k := key{addr, t}
	if i, ok := w.arr[k]; ok {
		if o := &w.snap.objs[i]; o.typ.Len() >= n {
			return nil
		}
		// A longer slice of the same array: save it again, longer (both
		// copies hold the same bytes, so restoring both is harmless).
	}
	w.arr[k] = len(w.snap.objs)
	cp := reflect.New(at)
	cp.Elem().Set(reflect.NewAt(at, addr).Elem())
	ti := w.typeInfo(t)
	w.snap.objs = append(w.snap.objs, object{addr: addr, cp: cp, typ: at, raw: !ti.gc})
	w.snap.bytes += int(at.Size())
	if !ti.ptrs {
		return nil
	}
	sz := t.Size()
	for i := 0; i < n; i++ {
		w.push("", i)
		err := w.walk(unsafe.Add(addr, uintptr(i)*sz), t, ti)
		w.pop()
		if err != nil {
			return err
		}
	}
	return nil
}

// walk follows the references inside the value of type t at addr.
func (w *walker) walk(addr unsafe.Pointer, t reflect.Type, ti *typeInfo) error {
	if !ti.ptrs {
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		p := *(*unsafe.Pointer)(addr)
		if p == nil {
			return nil
		}
		return w.object(p, t.Elem())
	case reflect.Struct:
		for i := range ti.fields {
			f := &ti.fields[i]
			w.push(f.name, 0)
			err := w.walk(unsafe.Add(addr, f.off), f.typ, f.info)
			w.pop()
			if err != nil {
				return err
			}
		}
	case reflect.Array:
		et, ei := t.Elem(), w.typeInfo(t.Elem())
		sz := et.Size()
		for i := 0; i < t.Len(); i++ {
			w.push("", i)
			err := w.walk(unsafe.Add(addr, uintptr(i)*sz), et, ei)
			w.pop()
			if err != nil {
				return err
			}
		}
	case reflect.Slice:
		v := reflect.NewAt(t, addr).Elem()
		if v.Cap() == 0 {
			return nil
		}
		return w.array(v.UnsafePointer(), t.Elem(), v.Cap())
	case reflect.Map:
		return w.mapValue(reflect.NewAt(t, addr).Elem())
	case reflect.Interface:
		v := reflect.NewAt(t, addr).Elem()
		if v.IsNil() {
			return nil
		}
		d := v.Elem()
		if w.trace {
			w.push("("+d.Type().String()+")", 0)
			defer w.pop()
		}
		if d.Kind() == reflect.Pointer {
			if d.IsNil() {
				return nil
			}
			return w.object(d.UnsafePointer(), d.Type().Elem())
		}
		// A boxed value cannot change; what it points to can.
		tmp := reflect.New(d.Type())
		tmp.Elem().Set(d)
		return w.walk(tmp.UnsafePointer(), d.Type(), w.typeInfo(d.Type()))
	case reflect.Func:
		if *(*unsafe.Pointer)(addr) != nil {
			return w.fail("a func value (its captured variables cannot be saved; tag the field `snapshot:\"shared\"` if they are immutable or saved elsewhere)")
		}
	case reflect.Chan:
		if *(*unsafe.Pointer)(addr) != nil {
			return w.fail("a channel")
		}
	case reflect.UnsafePointer:
		if *(*unsafe.Pointer)(addr) != nil {
			return w.fail("an unsafe.Pointer")
		}
	}
	return nil
}

func (w *walker) mapValue(m reflect.Value) error {
	if m.IsNil() || w.maps[m.UnsafePointer()] {
		return nil
	}
	w.maps[m.UnsafePointer()] = true
	cp := reflect.MakeMapWithSize(m.Type(), m.Len())
	it := m.MapRange()
	kt, vt := m.Type().Key(), m.Type().Elem()
	ki, vi := w.typeInfo(kt), w.typeInfo(vt)
	for it.Next() {
		k, v := it.Key(), it.Value()
		cp.SetMapIndex(k, v)
		for _, x := range []struct {
			v  reflect.Value
			ti *typeInfo
		}{{k, ki}, {v, vi}} {
			if !x.ti.ptrs {
				continue
			}
			tmp := reflect.New(x.v.Type())
			tmp.Elem().Set(x.v)
			w.push("[map entry]", 0)
			err := w.walk(tmp.UnsafePointer(), x.v.Type(), x.ti)
			w.pop()
			if err != nil {
				return err
			}
		}
	}
	w.snap.maps = append(w.snap.maps, savedMap{m: m, cp: cp})
	return nil
}

// gcPointers reports whether a value of type t holds words the garbage
// collector reads as pointers (every field, tagged or not, and strings).
func gcPointers(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer, reflect.String:
		return true
	case reflect.Array:
		return t.Len() > 0 && gcPointers(t.Elem())
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if gcPointers(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
