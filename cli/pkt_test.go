package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const pktServer = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 bind(3, ..., ...) = 0\n+0 listen(3, 1) = 0\n" +
	"+0 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>\n+0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>\n" +
	"+.1 < . 1:1(0) ack 1 win 257\n+0 accept(3, ..., ...) = 4\n+0 write(4, ..., 10000) = 10000\n"

// actfuzz pkt's exit statuses: 0 pass, 1 fail (the mismatch and its
// line), 2 bad script (its line), 4 unsupported (the construct); a
// directory prints counts per topic.
func TestPktExit(t *testing.T) {
	dir := t.TempDir()
	scripts := map[string]string{
		"a/pass.pkt":        pktServer + "+0 > P. 1:10001(10000) ack 1\n+0 %{ assert tcpi_snd_cwnd == 10 }%\n",
		"a/fail.pkt":        pktServer + "+0 > P. 1:10001(10000) ack 1\n+0 %{ assert tcpi_snd_cwnd == 9, tcpi_snd_cwnd }%\n",
		"b/bad.pkt":         pktServer + "+0 > P. 1:10001 ack 1\n",
		"b/unsupported.pkt": pktServer + "+0 shutdown(4, SHUT_WR) = 0\n",
	}
	for name, body := range scripts {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"a/pass.pkt"}, exitOK, "pass"},
		{[]string{"a/fail.pkt", "--profile", "linux-3.10"}, exitFound, "line 10"},
		{[]string{"b/bad.pkt"}, exitUsage, "line 9: syntax error"},
		{[]string{"b/unsupported.pkt"}, exitUnsupported, "unsupported: syscall shutdown"},
		{[]string{"a/pass.pkt", "--profile", "bsd"}, exitUsage, ""},
		{[]string{"."}, exitUsage, "total"},
		{[]string{"a"}, exitFound, "total"},
	} {
		args := append([]string{"pkt"}, tc.args...)
		for i, a := range args {
			if strings.HasSuffix(a, ".pkt") || a == "." || a == "a" {
				args[i] = filepath.Join(dir, a)
			}
		}
		code, out, errs := runCLI(context.Background(), args...)
		if code != tc.code || !strings.Contains(out+errs, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s%s", tc.args, code, tc.code, tc.want, out, errs)
		}
	}
}
