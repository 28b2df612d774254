package pkt

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// suiteDir is packetdrill's test suite beside the repository (issue 49).
const suiteDir = "../../../shared/packetdrill/gtests/net/tcp"

// suiteScripts lists the suite's scripts, in every subdirectory.
func suiteScripts(t testing.TB) []string {
	var files []string
	filepath.WalkDir(suiteDir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".pkt") {
			files = append(files, path)
		}
		return nil
	})
	if len(files) == 0 {
		t.Skipf("packetdrill suite not found at %s", suiteDir)
	}
	return files
}

// TestParseSuite: every script of the suite parses (a construct the
// interpreter cannot model still parses, and is classified when run).
func TestParseSuite(t *testing.T) {
	n := 0
	for _, f := range suiteScripts(t) {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(string(src)); err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		n++
	}
	t.Logf("%d scripts parsed", n)
}

func TestParseEvents(t *testing.T) {
	src := "`sysctl -q net.ipv4.tcp_sack=1`\n" +
		"0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n" +
		"+.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n" +
		"+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n" +
		"+0.1~+0.2 > P. 1:10001(10000) ack 1\n" +
		"* < [ect0] . 1:1(0) ack 1001 win 257 <sack 2001:3001 4001:5001,TS val 1 ecr 2>\n" +
		"+.09...0.14 write(4, ..., 150000) = 150000\n" +
		"+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n" +
		"+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n" +
		"+0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%\n"
	s, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	if s.Init == nil || !strings.Contains(s.Init.Text, "tcp_sack") {
		t.Errorf("init command: %+v", s.Init)
	}
	ev := s.Events
	if len(ev) != 9 {
		t.Fatalf("%d events", len(ev))
	}
	for i, c := range []struct {
		line       int
		kind       TimeKind
		start, end time.Duration
	}{
		{2, TimeAbsolute, 0, 0},
		{3, TimeRelative, 100 * time.Millisecond, 0},
		{4, TimeRelative, 0, 0},
		{5, TimeRelRange, 100 * time.Millisecond, 200 * time.Millisecond},
		{6, TimeAny, 0, 0},
		{7, TimeRelative, 90 * time.Millisecond, 0},
	} {
		if e := ev[i]; e.Line != c.line || e.Time.Kind != c.kind || e.Time.Start != c.start || e.Time.End != c.end {
			t.Errorf("event %d: line %d time %+v, want line %d %v %v~%v", i, e.Line, e.Time, c.line, c.kind, c.start, c.end)
		}
	}
	if p := ev[1].Packet; !p.Inbound || p.Flags != "S" || !p.HasWin || p.Win != 32792 || len(p.Options) != 6 || p.Options[0].Val != 1000 {
		t.Errorf("SYN: %+v", p)
	}
	if p := ev[3].Packet; p.Inbound || p.Flags != "P." || p.Seq != 1 || p.End != 10001 || p.Ack != 1 {
		t.Errorf("data: %+v", p)
	}
	if p := ev[4].Packet; p.ECN != "ect0" || len(p.Options[0].Blocks) != 2 || p.Options[1].Kind != "TS" || p.Options[1].Ecr != 2 {
		t.Errorf("sack: %+v", p)
	}
	if sc := ev[5].Syscall; sc.Name != "write" || !sc.HasEnd || sc.EndTime != 140*time.Millisecond || sc.Result.Int != 150000 {
		t.Errorf("write: %+v", sc)
	}
	if sc := ev[6].Syscall; sc.Result.Int != -1 || sc.Errno != "EINPROGRESS" {
		t.Errorf("connect: %+v", sc)
	}
	if sc := ev[7].Syscall; sc.Args[2].Kind != ExprBinary {
		t.Errorf("fcntl: %+v", sc)
	}
	if c := ev[8].Code; c == nil || !strings.Contains(c.Text, "tcpi_snd_cwnd == 10") {
		t.Errorf("code: %+v", c)
	}
}

// TestSyntaxErrorLine: a syntax error names its line.
func TestSyntaxErrorLine(t *testing.T) {
	for _, c := range []struct {
		src  string
		line int
	}{
		{"0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 < S 0:0 win 1\n", 2},
		{"0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n\n+0 > Q 0:0(0)\n", 3},
		{"0 write(4, ..., 10) = 10\n+0 > . 1:11(9) ack 1\n", 2},
		{"// comment\n+0 write(4, ..., 10\n", 2},
		{"+0 %{ assert x\n", 1},
		{"\n\n+0.1~0.2 < . 1:1(0) ack 1\n", 3},
		{"+0 < . 1:1(0) ack 1 <bogus 3>\n", 1},
		{"`init`\n", 1},
		{"+x write(4, ..., 10) = 10\n", 1},
	} {
		_, err := Parse(c.src)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != c.line {
			t.Errorf("%q: %v, want a syntax error at line %d", c.src, err, c.line)
		}
	}
}

// FuzzParse: the parser never panics, and a script either parses or is a
// SyntaxError with a positive line.
func FuzzParse(f *testing.F) {
	f.Add("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+.1 < S 0:0(0) win 32792 <mss 1000,sackOK>\n")
	f.Add("+0 %{ assert tcpi_snd_cwnd == 10 }%\n+0~+1 > P. 1:11(10) ack 1 <...>\n")
	f.Add("`x`\n* > [ce] F. 1:1(0) ack 1 win 2 <sack 1:2,TS val 1 ecr 0>\n`y`\n")
	f.Fuzz(func(t *testing.T, src string) {
		_, err := Parse(src)
		var se *SyntaxError
		if err != nil && (!errors.As(err, &se) || se.Line < 1) {
			t.Fatalf("error without a line: %v", err)
		}
	})
}
