package sim

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

type recorder struct{ got []uint64 }

func (r *recorder) Handle(e *Event) { r.got = append(r.got, uint64(e.At)) }

func TestHeapOrderAndRemove(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := New(nil, Limits{})
	rec := &recorder{}
	var evs []*Event
	for i := 0; i < 2000; i++ {
		e := NewEvent(0, KindTimer, 0, rec)
		s.Schedule(e, time.Duration(rng.IntN(1000)))
		evs = append(evs, e)
	}
	removed := map[*Event]bool{}
	for i := 0; i < 500; i++ {
		e := evs[rng.IntN(len(evs))]
		s.Cancel(e)
		removed[e] = true
	}
	want := 0
	for _, e := range evs {
		if !removed[e] {
			want++
		}
		if removed[e] && e.Queued() {
			t.Fatal("cancelled event still queued")
		}
	}
	if s.Scheduler().Len() != want {
		t.Fatalf("queue length %d, want %d", s.Scheduler().Len(), want)
	}
	if err := s.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(rec.got) != want || !slices.IsSorted(rec.got) {
		t.Fatalf("executed %d events (want %d), sorted=%v", len(rec.got), want, slices.IsSorted(rec.got))
	}
}

type tieRecorder struct{ order []int }
type tagged struct {
	r *tieRecorder
	i int
}

func (t tagged) Handle(*Event) { t.r.order = append(t.r.order, t.i) }

func TestTiesAreFIFO(t *testing.T) {
	s := New(nil, Limits{})
	r := &tieRecorder{}
	for i := 0; i < 50; i++ {
		s.Schedule(NewEvent(0, KindTimer, 0, tagged{r, i}), 5)
	}
	_ = s.Run(context.Background())
	for i, v := range r.order {
		if v != i {
			t.Fatalf("tie order %v", r.order)
		}
	}
}

type forever struct{ s *Sim }

func (f *forever) Handle(e *Event) { f.s.Schedule(e, time.Millisecond) }

func TestCaps(t *testing.T) {
	for _, tc := range []struct {
		name   string
		limits Limits
	}{
		{"time", Limits{MaxTime: time.Second}},
		{"events", Limits{MaxEvents: 1000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil, tc.limits)
			f := &forever{s}
			s.Schedule(NewEvent(0, KindTimer, 0, f), 0)
			_ = s.Run(context.Background())
			if !s.Capped() {
				t.Fatal("endless run was not capped")
			}
			if tc.limits.MaxTime > 0 && s.Now() > tc.limits.MaxTime {
				t.Fatalf("ran past the time cap: %v", s.Now())
			}
			if tc.limits.MaxEvents > 0 && s.Events() > tc.limits.MaxEvents {
				t.Fatalf("ran past the event cap: %d", s.Events())
			}
		})
	}
}

func TestGammaMoments(t *testing.T) {
	for _, tc := range []struct{ shape, scale float64 }{{0.5, 2}, {1, 10}, {2.5, 1}, {20, 80}} {
		r := NewRand(7, StreamQueueDelay, 0)
		n := 200000
		var sum, sq float64
		for i := 0; i < n; i++ {
			x := Gamma(r, tc.shape, tc.scale)
			sum += x
			sq += x * x
		}
		mean := sum / float64(n)
		vr := sq/float64(n) - mean*mean
		wantMean, wantVar := tc.shape*tc.scale, tc.shape*tc.scale*tc.scale
		if d := mean/wantMean - 1; d > 0.02 || d < -0.02 {
			t.Errorf("Gamma(%v,%v) mean %.4f, want %.4f", tc.shape, tc.scale, mean, wantMean)
		}
		if d := vr/wantVar - 1; d > 0.05 || d < -0.05 {
			t.Errorf("Gamma(%v,%v) variance %.4f, want %.4f", tc.shape, tc.scale, vr, wantVar)
		}
	}
}

func TestPortableLogExp(t *testing.T) {
	for _, x := range []float64{1e-300, 1e-9, 0.1, 0.5, 0.70710678, 0.9999, 1, 1.5, 2, 1e9} {
		got, want := portableLog(x), math.Log(x)
		if d := got - want; d > 1e-12*max(1, math.Abs(want)) || d < -1e-12*max(1, math.Abs(want)) {
			t.Errorf("portableLog(%g) = %.17g, want %.17g", x, got, want)
		}
	}
	for _, x := range []float64{-600, -10, -1, -0.5, -1e-9, 0} {
		got, want := portableExp(x), math.Exp(x)
		if d := (got - want) / want; d > 1e-13 || d < -1e-13 {
			t.Errorf("portableExp(%g) = %.17g, want %.17g", x, got, want)
		}
	}
}

func BenchmarkHeapChurn(b *testing.B) {
	s := New(nil, Limits{})
	evs := make([]*Event, 256)
	for i := range evs {
		evs[i] = NewEvent(0, KindTimer, 0, &recorder{})
		s.Schedule(evs[i], time.Duration(i*1000))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e := s.sched.PopMin()
		s.now = e.At
		s.Schedule(e, time.Duration(i%4096))
	}
}
