package shell

import (
	"os/exec"
	"testing"
)

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"out/make-run/findings/huge-cwnd/act-0000001.json", "out/make-run/findings/huge-cwnd/act-0000001.json"},
		{"", "''"},
		{"my out/seed.json", "'my out/seed.json'"},
		{"it's", `'it'\''s'`},
		{"$HOME;rm", "'$HOME;rm'"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %q, want %q", tc.in, got, tc.want)
		}
		// The shell reads it back as the one argument it was.
		out, err := exec.Command("sh", "-c", "printf %s "+Quote(tc.in)).Output()
		if err != nil {
			t.Fatalf("sh: %v", err)
		}
		if string(out) != tc.in {
			t.Errorf("sh read %q back as %q", tc.in, out)
		}
	}
}
