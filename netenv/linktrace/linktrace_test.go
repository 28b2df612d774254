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
	for _, tc := range []struct{ in, err string }{
		{"1\n1\n3\n", ""},
		{"", "no delivery opportunity"},
		{"5\n3\n", "line 2: 3 ms comes before 5 ms"},
		{"1\nx\n", `line 2: "x"`},
		{"-1\n", "line 1"},
	} {
		tr, err := Parse(strings.NewReader(tc.in))
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		case tc.err == "" && (len(tr.Opportunities) != 3 || tr.Period != 3*time.Millisecond):
			t.Errorf("%q: %+v", tc.in, tr)
		}
	}
}
