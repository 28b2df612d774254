package linktrace

import (
	"strings"
	"testing"
	"time"
)

func TestShipped(t *testing.T) {
	for _, tc := range []struct {
		name      string
		lo, hi    float64 // mean rate, Mbit/s
		minPeriod time.Duration
	}{
		{"steady", 11.9, 12.1, time.Second},
		{"lte", 3, 30, 29 * time.Second},
		{"wifi", 15, 35, 9 * time.Second},
	} {
		tr, err := Shipped(tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if r := tr.MeanRate(); r < tc.lo || r > tc.hi || tr.Period < tc.minPeriod {
			t.Errorf("%s: mean %.2f Mbit/s over %v, want [%v, %v] over ≥ %v", tc.name, r, tr.Period, tc.lo, tc.hi, tc.minPeriod)
		}
	}
	if _, err := Shipped("5g"); err == nil || !strings.Contains(err.Error(), "steady") {
		t.Fatalf("unknown trace: %v", err)
	}
}

func TestParse(t *testing.T) {
	secret := "HOME=/root\x00TOKEN=hunter2\x00"
	for _, tc := range []struct {
		name, in, err string
		max           int
	}{
		{"valid", "1\n1\n3\n", "", 0},
		{"no newline at the end", "1\n1\n3", "", 0},
		{"blank lines and spaces", "\n 1 \r\n1\n\n3\n", "", 0},
		{"empty", "", "no delivery opportunity", 0},
		{"decreasing", "5\n3\n", "2:1: timestamps must not decrease: this one is earlier than line 1's", 0},
		{"not a number", "1\nx\n", "2:1: want a millisecond timestamp", 0},
		{"negative", "-1\n", "1:1: want a millisecond timestamp", 0},
		{"column of the bad byte", "1\n  12a4\n", "2:5: want", 0},
		{"too long ago", "1\n99999999999999999999999\n", "2:1: a timestamp beyond", 0},
		{"a line too long", "1\n" + strings.Repeat("7", 5000) + "\n", "2:4097: a line longer than 4096 bytes", 0},
		{"environment", secret, "1:1: want a millisecond timestamp", 0},
		{"points capped", "1\n2\n3\n4\n", "4:1: over the cap of 3 delivery opportunities (max_trace_points)", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			max := tc.max
			if max == 0 {
				max = MaxPoints
			}
			tr, err := parse(strings.NewReader(tc.in), max)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("%v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want %q", err, tc.err)
			case tc.err == "" && (len(tr.Opportunities) != 3 || tr.Period != 3*time.Millisecond):
				t.Fatalf("%+v", tr)
			}
			// A message quotes a position, never the content.
			if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "HOME") || strings.Contains(err.Error(), "777")) {
				t.Errorf("the error quotes the file: %v", err)
			}
		})
	}
}
