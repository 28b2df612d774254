package bounded

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Run returns when its work does, when the watchdog expires or when its
// context ends, whether or not the work looks at its context. No test
// here asserts how long anything took.
func TestRun(t *testing.T) {
	cooperative := func(ctx context.Context) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}
	stuck := make(chan struct{})
	defer close(stuck) // lets the abandoned goroutines end with the test
	deaf := func(context.Context) (int, error) {
		<-stuck
		return 0, nil
	}
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name     string
		ctx      context.Context
		watchdog time.Duration
		fn       func(context.Context) (int, error)
		want     int
		is       []error
		not      []error
	}{
		{"in time", context.Background(), time.Hour, func(context.Context) (int, error) { return 7, nil }, 7, nil, nil},
		{"no watchdog", context.Background(), 0, func(context.Context) (int, error) { return 7, nil }, 7, nil, nil},
		{"its own error", context.Background(), time.Hour, func(context.Context) (int, error) { return 0, errors.ErrUnsupported }, 0, []error{errors.ErrUnsupported}, []error{ErrWatchdog}},
		{"watchdog, cooperative", context.Background(), time.Nanosecond, cooperative, 0, []error{ErrWatchdog}, []error{ErrAbandoned, context.Canceled}},
		{"watchdog, deaf", context.Background(), time.Nanosecond, deaf, 0, []error{ErrWatchdog, ErrAbandoned}, nil},
		{"cancelled, cooperative", done, time.Hour, cooperative, 0, []error{context.Canceled}, []error{ErrWatchdog, ErrAbandoned}},
		{"cancelled, deaf", done, 0, deaf, 0, []error{context.Canceled, ErrAbandoned}, []error{ErrWatchdog}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Run(tc.ctx, tc.watchdog, tc.fn)
			if got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			for _, e := range tc.is {
				if !errors.Is(err, e) {
					t.Errorf("error %v is not %v", err, e)
				}
			}
			for _, e := range tc.not {
				if errors.Is(err, e) {
					t.Errorf("error %v is %v", err, e)
				}
			}
			if len(tc.is) == 0 && err != nil {
				t.Errorf("error %v", err)
			}
		})
	}
}
