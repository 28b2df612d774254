package pkt

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/actfuzz/actfuzz/ccai" // the registry's algorithms
)

const ms = time.Millisecond

func TestResolveTime(t *testing.T) {
	c := newClock()
	for i, tc := range []struct {
		et        EventTime
		now       time.Duration
		t, lo, hi time.Duration
		any       bool
	}{
		{EventTime{Kind: TimeAbsolute}, 0, 0, -4 * ms, 4 * ms, false},
		{EventTime{Kind: TimeRelative, Start: 100 * ms}, 0, 100 * ms, 87500 * time.Microsecond, 112500 * time.Microsecond, false},
		// 12.5% of a 1 s gap is 125 ms, above the 4 ms floor.
		{EventTime{Kind: TimeRelative, Start: time.Second}, 0, 1100 * ms, 975 * ms, 1225 * ms, false},
		{EventTime{Kind: TimeRelRange, Start: 10 * ms, End: 20 * ms}, 0, 1110 * ms, 1106 * ms, 1124 * ms, false},
		{EventTime{Kind: TimeAny}, 1500 * ms, 1500 * ms, 1500 * ms, 1500*ms + anyTimeHorizon, true},
		// After "*" a relative time counts from when it happened.
		{EventTime{Kind: TimeRelative, Start: 10 * ms}, 1600 * ms, 1610 * ms, 1606 * ms, 1614 * ms, false},
		{EventTime{Kind: TimeAbsRange, Start: 2 * time.Second, End: 3 * time.Second}, 0, 2 * time.Second, 2*time.Second - 48750*time.Microsecond, 3*time.Second + 48750*time.Microsecond, false},
	} {
		w := c.resolve(tc.et, tc.now)
		if w.t != tc.t || w.lo != tc.lo || w.hi != tc.hi || w.any != tc.any {
			t.Errorf("%d: %+v: got t %v [%v, %v] any %v; want t %v [%v, %v] any %v", i, tc.et, w.t, w.lo, w.hi, w.any, tc.t, tc.lo, tc.hi, tc.any)
		}
	}
}

func TestEvalCode(t *testing.T) {
	vars := map[string]float64{"tcpi_snd_cwnd": 10, "tcpi_ca_state": 3, "tcpi_rto": 300000}
	field := func(n string) (float64, error) {
		if v, ok := constant(n); ok {
			return v, nil
		}
		if v, ok := vars[n]; ok {
			return v, nil
		}
		return 0, unsupported("TCP_INFO field %s", n)
	}
	for _, tc := range []struct {
		code   string
		fail   string // substring of the failure, "" for none
		unsupp string // substring of the unsupported construct
	}{
		{"assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd", "", ""},
		{"\nassert tcpi_ca_state == TCP_CA_Recovery, tcpi_ca_state\nassert tcpi_snd_cwnd == 10\n", "", ""},
		{"assert 290000 <= tcpi_rto <= 310000; assert tcpi_snd_cwnd != 9", "", ""},
		{"assert tcpi_snd_cwnd == 2 * 5 and not tcpi_ca_state == 0", "", ""},
		{"assert (tcpi_rto - 100000) // 1000 == 200 or False", "", ""},
		{"assert tcpi_snd_cwnd == 11, tcpi_snd_cwnd", "tcpi_snd_cwnd=10", ""},
		{"assert 1 <= tcpi_snd_cwnd <= 9", "failed", ""},
		{"assert tcpi_busy_time == 0", "", "tcpi_busy_time"},
		{"print(tcpi_snd_cwnd)", "", "python statement"},
		{"assert tcpi_snd_cwnd ==", "", "ends early"},
		// Assignments persist for later statements (and blocks).
		{"prev_cwnd = tcpi_snd_cwnd\nassert prev_cwnd == 10", "", ""},
		{"x = 3; assert x + tcpi_snd_cwnd == 13", "", ""},
		{"x = tcpi_snd_cwnd  # a comment\nassert x == 10  # another", "", ""},
		{"x = 3; assert x > tcpi_snd_cwnd, x", "failed", ""},
		{"x == 3", "", "python statement"},
		{"x = print(1)", "", "python"},
	} {
		msg, err := evalCode(tc.code, field, map[string]float64{})
		switch {
		case tc.unsupp != "":
			if err == nil || !strings.Contains(err.Error(), tc.unsupp) {
				t.Errorf("%q: %v, want unsupported %q", tc.code, err, tc.unsupp)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.code, err)
		case tc.fail == "" && msg != "":
			t.Errorf("%q: %s", tc.code, msg)
		case tc.fail != "" && !strings.Contains(msg, tc.fail):
			t.Errorf("%q: %q, want a failure with %q", tc.code, msg, tc.fail)
		}
	}
}

func TestShellFields(t *testing.T) {
	got, err := shellFields(`sysctl -q net.ipv4.tcp_rmem="4096 540000 $((15*1024*1024))" 'a b'`)
	want := []string{"sysctl", "-q", "net.ipv4.tcp_rmem=4096 540000 15728640", "a b"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

// server is a passive open with a 100 ms RTT, MSS 1000 and SACK.
const server = "`sysctl -q net.ipv4.tcp_sack=1 net.ipv4.tcp_slow_start_after_idle=0`\n" +
	"0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n" +
	"+0 bind(3, ..., ...) = 0\n" +
	"+0 listen(3, 1) = 0\n" +
	"+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n" +
	"+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n" +
	"+.1 < . 1:1(0) ack 1 win 257\n" +
	"+0 accept(3, ..., ...) = 4\n"

func TestScripts(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     Status
		line       int
		msg        string // substring of Result.Msg
	}{
		{"slow start", "+0 write(4, ..., 20000) = 20000\n+0 > P. 1:10001(10000) ack 1\n" +
			"+0 %{ assert tcpi_snd_cwnd == 10 }%\n+.1 < . 1:1(0) ack 2001 win 257\n+0 > . 10001:14001(4000) ack 1\n" +
			"+0 %{ assert tcpi_snd_cwnd == 12, tcpi_snd_cwnd }%\n", Pass, 0, ""},
		{"RTO", "+0 write(4, ..., 1000) = 1000\n+0 > P. 1:1001(1000) ack 1\n" +
			"+0 %{ assert tcpi_rto == 300000, tcpi_rto }%\n" +
			"+.3 > . 1:1001(1000) ack 1\n+0 %{ assert tcpi_ca_state == TCP_CA_Loss and tcpi_retransmits == 1 and tcpi_snd_cwnd == 1 }%\n", Pass, 0, ""},
		{"fast retransmit", "+0 write(4, ..., 5000) = 5000\n+0 > P. 1:5001(5000) ack 1\n" +
			"+.1 < . 1:1(0) ack 1 win 257 <sack 1001:2001,nop,nop>\n+0 < . 1:1(0) ack 1 win 257 <sack 1001:3001,nop,nop>\n" +
			"+0 < . 1:1(0) ack 1 win 257 <sack 1001:4001,nop,nop>\n+0 > . 1:1001(1000) ack 1\n" +
			"+0 %{ assert tcpi_ca_state == TCP_CA_Recovery and tcpi_lost == 1 and tcpi_sacked == 3 }%\n" +
			"+.1 < . 1:1(0) ack 5001 win 257\n+.1 close(4) = 0\n+0 > F. 5001:5001(0) ack 1\n", Pass, 0, ""},
		// tcp_slow_start_after_idle=0 (server's preamble) keeps cwnd over
		// 2 s of idle (tcp.SenderConfig.NoIdleRestart); =1 restarts it
		// from the initial window (RFC 5681 §4.1).
		{"no idle restart", "+0 write(4, ..., 10000) = 10000\n+0 > P. 1:10001(10000) ack 1\n+.1 < . 1:1(0) ack 10001 win 257\n" +
			"+2 write(4, ..., 20000) = 20000\n+0 > P. 10001:30001(20000) ack 1\n+0 %{ assert tcpi_snd_cwnd == 20, tcpi_snd_cwnd }%\n", Pass, 0, ""},
		{"idle restart", "+0 `sysctl -q net.ipv4.tcp_slow_start_after_idle=1`\n+0 write(4, ..., 10000) = 10000\n+0 > P. 1:10001(10000) ack 1\n" +
			"+.1 < . 1:1(0) ack 10001 win 257\n+2 write(4, ..., 20000) = 20000\n+0 > P. 10001:20001(10000) ack 1\n" +
			"+0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%\n", Pass, 0, ""},
		{"wrong range", "+0 write(4, ..., 10000) = 10000\n+0 > P. 1:12001(12000) ack 1\n", Fail, 10, "the model sent . 1:10001(10000)"},
		{"late", "+0 write(4, ..., 1000) = 1000\n+.05 > P. 1:1001(1000) ack 1\n", Fail, 10, "at 0.150000 s"},
		{"nothing sent", "+.01 > P. 1:1001(1000) ack 1\n", Fail, 9, "sent nothing"},
		{"assert", "+0 write(4, ..., 1000) = 1000\n+0 %{ assert tcpi_snd_cwnd == 11, tcpi_snd_cwnd }%\n", Fail, 10, "tcpi_snd_cwnd=10"},
		{"syscall", "+0 read(4, ..., 1000) = 1000\n", Unsupported, 9, "syscall read"},
		{"sysctl", "+0 `sysctl -q net.ipv4.tcp_reordering=10`\n", Unsupported, 9, "tcp_reordering=10"},
		{"inbound data", "+0 < P. 1:1001(1000) ack 1 win 257\n", Unsupported, 9, "inbound data"},
		{"field", "+0 %{ assert tcpi_busy_time == 0 }%\n", Unsupported, 9, "tcpi_busy_time"},
		{"rwnd", "+0 < . 1:1(0) ack 1 win 1\n+0 write(4, ..., 10000) = 10000\n", Unsupported, 10, "receive window"},
		{"syntax", "+0 > P. 1:1001 ack 1\n", BadScript, 9, "line 9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Parse(server + tc.body)
			var r Result
			if err != nil {
				r = Result{Status: BadScript, Line: err.(*SyntaxError).Line, Msg: err.Error()}
			} else {
				r = Run(s, Config{})
			}
			if r.Status != tc.status || r.Line != tc.line || !strings.Contains(r.Msg, tc.msg) {
				t.Errorf("got %v (line %d), want %v at line %d with %q", r, r.Line, tc.status, tc.line, tc.msg)
			}
		})
	}
}

// suitePasses are the suite's scripts the native model passes at profile
// linux: a model change that breaks one of them departs from Linux.
var suitePasses = []string{
	"blocking/blocking-connect.pkt",
	"blocking/blocking-write.pkt",
	"close/close-local-close-then-remote-fin.pkt",
	"ecn/ecn-uses-ect0.pkt",
	"fast_recovery/prr-ss-10pkt-lost-1.pkt",
	"fast_recovery/prr-ss-30pkt-lost1_4.pkt",
	"fast_retransmit/fr-4pkt-sack.pkt",
	"fast_retransmit/fr-4pkt.pkt",
	"limited_transmit/limited-transmit-no-sack.pkt",
	"limited_transmit/limited-transmit-sack.pkt",
	"slow_start/slow-start-ack-per-1pkt.pkt",
	"slow_start/slow-start-ack-per-2pkt-send-5pkt.pkt",
	"slow_start/slow-start-ack-per-2pkt-send-6pkt.pkt",
	"slow_start/slow-start-ack-per-2pkt.pkt",
	"slow_start/slow-start-ack-per-4pkt.pkt",
	"slow_start/slow-start-after-idle.pkt",
	"slow_start/slow-start-app-limited-9-packets-out.pkt",
	"slow_start/slow-start-app-limited.pkt",
}

func TestSuitePassList(t *testing.T) {
	suiteScripts(t) // skips without the suite
	for _, name := range suitePasses {
		if r := RunFile(filepath.Join(suiteDir, name), Config{}); r.Status != Pass {
			t.Errorf("%s: %v", name, r)
		}
	}
}

// TestSuiteReport runs every suite script and logs its outcome (go test
// -v); no script may be a bad script or panic.
func TestSuiteReport(t *testing.T) {
	counts := map[string]map[Status]int{}
	for _, f := range suiteScripts(t) {
		r := RunFile(f, Config{})
		rel, _ := filepath.Rel(suiteDir, f)
		topic := filepath.Dir(rel)
		if counts[topic] == nil {
			counts[topic] = map[Status]int{}
		}
		counts[topic][r.Status]++
		if r.Status == BadScript {
			t.Errorf("%s: %v", rel, r)
		}
		t.Logf("%-60s %v", rel, r)
	}
	for topic, c := range counts {
		t.Logf("%-20s pass %d fail %d unsupported %d", topic, c[Pass], c[Fail], c[Unsupported])
	}
}

// FuzzRun: a script that parses never panics the interpreter, and its
// outcome is one of the four.
func FuzzRun(f *testing.F) {
	f.Add(server + "+0 write(4, ..., 5000) = 5000\n+0 > P. 1:5001(5000) ack 1\n+.1 < . 1:1(0) ack 1 win 257 <sack 1001:3001,nop,nop>\n")
	f.Add(server + "+0 close(4) = 0\n+0 > F. 1:1(0) ack 1\n+.1 < F. 1:1(0) ack 2 win 257\n* > . 2:2(0) ack 2\n")
	f.Add("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 connect(3, ..., ...) = -1\n+0 > SEW 0:0(0)\n+.01 < SE. 0:0(0) ack 1 win 100 <mss 100,TS val 1 ecr 0>\n+0 write(3, ..., 300) = 300\n")
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Parse(src)
		if err != nil {
			return
		}
		for _, ev := range s.Events {
			// Bound the simulated span so that one input stays fast.
			if ev.Time.Start > 10*time.Second || ev.Time.End > 10*time.Second {
				return
			}
		}
		if r := Run(s, Config{}); r.Status < Pass || r.Status > Unsupported {
			t.Fatalf("status %d", r.Status)
		}
	})
}
