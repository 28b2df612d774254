package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/linux"
)

func linuxOrSkip(t *testing.T) {
	t.Helper()
	if _, err := linux.Open(); errors.Is(err, linux.ErrUnavailable) {
		t.Skipf("linux subject unavailable: %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// writeSeed writes a native condition seed with the given condition.
func writeSeed(t *testing.T, cca, when string, e netenv.Env) string {
	t.Helper()
	s := corpus.Seed{Version: corpus.SeedVersion, Program: corpus.ProgramVersion(), Subject: "native",
		CCAI: []string{cca}, Profile: "linux", Bytes: 500_000, SACK: true, Seed: 3, Schedule: netenv.Constant(e),
		Finding: &corpus.Finding{Condition: "c", When: when, Kind: "condition", TimeNS: 1e8}}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "seed.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLinuxSubjectCLI checks the linux subject's bad input (exit 2, naming
// what is wrong) and a confirm that holds.
func TestLinuxSubjectCLI(t *testing.T) {
	linuxOrSkip(t)
	env := netenv.DefaultEnv()
	fast := env
	fast.BW = 5000
	// A campaign whose P reaches 1 Gbit/s, beyond the emulator.
	wideBW := filepath.Join(t.TempDir(), "wide.yaml")
	if err := os.WriteFile(wideBW, []byte("ccai: [cubic]\nparams:\n  bw: {min: 1, max: 1000, step: 1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A modern-profile campaign over CUBIC's target, which TCP_INFO lacks
	// (examples/make-run.yaml runs linux-3.10, refused for its profile first).
	withTarget := filepath.Join(t.TempDir(), "target.yaml")
	if err := os.WriteFile(withTarget, []byte("ccai: [cubic, reno]\nconditions:\n  - {name: cubic-aggressive, when: \"cwnd > ssthresh && target > 2*cwnd\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"unknown CCA", []string{"sim", "--subject", "linux", "--cca", "vegasx"}, 2, `"vegasx" for the linux subject (known: `},
		{"beyond the emulator", []string{"sim", "--subject", "linux", "--bw", "5000"}, 2, "at most 200 Mbit/s"},
		{"variable the kernel lacks", []string{"confirm", writeSeed(t, "cubic", "target > 2*cwnd", env), "--runs", "1"}, 2, "does not provide"},
		{"confirm beyond the emulator", []string{"confirm", writeSeed(t, "cubic", "cwnd > 1", fast), "--runs", "1"}, 2, "bw = 5000"},
		{"confirm bad runs", []string{"confirm", writeSeed(t, "cubic", "cwnd > 1", env), "--runs", "0"}, 2, "--runs"},
		{"campaign beyond the emulator", []string{"run", wideBW, "--subject", "linux", "--budget", "1", "--out", filepath.Join(t.TempDir(), "o")}, 2, "at most 200 Mbit/s"},
		{"campaign on a variable the kernel lacks", []string{"compare", withTarget, "--subject", "linux", "--budget", "1"}, 2, "the linux subject does not provide target"},
		{"campaign with a profile", []string{"compare", filepath.Join("..", "examples", "cubic-aggressive.yaml"), "--subject", "linux", "--budget", "1"}, 2, "profile linux-3.10 does not apply to the linux subject"},
		{"confirm held", []string{"confirm", writeSeed(t, "reno", "cwnd >= 10", env), "--runs", "2", "--workers", "2"}, 0, "held in 2/2 runs on linux (kernel "},
		{"confirm never", []string{"confirm", writeSeed(t, "reno", "cwnd > 1e7", env), "--runs", "1"}, 1, "held in 0/1 runs"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := dispatch(context.Background(), tc.args, &out, &errb)
			all := out.String() + errb.String()
			if code != tc.code || !strings.Contains(all, tc.msg) {
				t.Errorf("%v: exit %d, output %q; want %d mentioning %q", tc.args, code, all, tc.code, tc.msg)
			}
		})
	}
}
