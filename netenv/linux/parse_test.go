package linux

import (
	"testing"
	"time"
)

// These tests need no root.

func TestParseLine(t *testing.T) {
	const t0 = 1000 * int64(time.Second)
	tests := []struct {
		name string
		line string
		ok   bool
		want event
	}{
		{"probe", "          <idle>-0       [001] ..s2. 1001.250000: tcp_probe: family=AF_INET src=10.0.0.1:10001 dest=10.0.0.2:5001 mark=0x0 data_len=0 snd_nxt=0x5f3 snd_una=0x1 snd_cwnd=12 ssthresh=2147483647 snd_wnd=65535 srtt=40780 rcv_wnd=65535 sock_cookie=2a skbaddr=000000004f2a skaddr=00000000beef",
			true, event{at: 1250 * time.Millisecond, probe: true, cookie: 0x2a, cwnd: 12, ssth: 2147483647, srtt: 40780 * time.Microsecond, skaddr: "00000000beef"}},
		{"state", " actfuzz.test-4242  [000] b..1. 1002.000001: tcp_cong_state_set: family=AF_INET sport=10001 dport=5001 saddr=10.0.0.1 daddr=10.0.0.2 saddrv6=::ffff:10.0.0.1 daddrv6=::ffff:10.0.0.2 cong_state=3",
			true, event{at: 2*time.Second + time.Microsecond, sport: 10001, state: 3}},
		{"task name with spaces", " my task-1 [000] ..... 1000.000010: tcp_cong_state_set: sport=7 cong_state=4",
			true, event{at: 10 * time.Microsecond, sport: 7, state: 4}},
		{"another event", " x-1 [000] ..... 1000.1: sched_switch: prev=a", false, event{}},
		{"lost events", "CPU:1 [LOST 12 EVENTS]", false, event{}},
		{"bad time", " x-1 [000] ..... 10x0.1: tcp_probe: snd_cwnd=1", false, event{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseLine(tc.line, t0)
			if ok != tc.ok {
				t.Fatalf("ok %v, want %v", ok, tc.ok)
			}
			if ok && got != tc.want {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestPorts(t *testing.T) {
	s := &Subject{pid: 4242}
	seen := map[uint16]uint64{}
	// Concurrent runs of one process get disjoint ports as long as
	// fewer than portSpan ports are in use at once; none is the
	// listener's.
	for n := uint64(1); n <= 50; n++ {
		for _, p := range s.ports(n, 4) {
			if p == listenPort {
				t.Fatalf("run %d got the listen port", n)
			}
			if m, dup := seen[p]; dup {
				t.Fatalf("port %d given to runs %d and %d", p, m, n)
			}
			seen[p] = n
		}
	}
	s2 := &Subject{pid: 4243}
	for _, p := range s2.ports(1, 4) {
		if _, dup := seen[p]; dup {
			t.Fatalf("port %d shared by two processes", p)
		}
	}
}

func TestParseOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"actfuzz-123-4", 123, true},
		{"actfuzz-123", 123, true},
		{"actfuzz-x-4", 0, false},
		{"other-123-4", 0, false},
		{"actfuzz--4", 0, false},
	} {
		pid, ok := parseOwner(tc.name, instancePrefix)
		if ok != tc.ok || (ok && pid != tc.pid) {
			t.Errorf("%s: %d %v, want %d %v", tc.name, pid, ok, tc.pid, tc.ok)
		}
	}
}
