package pktexport

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv/pkt"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// knownSeed is a minimized native finding at profile linux: CUBIC's
// HyStart lowering ssthresh in recovery (oracle ssthresh-steady), on a
// 1.1 Mbit/s, 90 ms path with 0.2% loss.
const knownSeed = "testdata/cubic-ssthresh-steady.json"

// kernelSeed is another, on a 40 Mbit/s, 70 ms path without random loss
// (a 100-packet buffer overflows): its script with --within 200ms held
// on Linux 6.18 (docs/packetdrill.md).
const kernelSeed = "testdata/cubic-hystart-in-recovery-40mbit.json"

func readKnown(t *testing.T) *corpus.Seed { return readSeed(t, knownSeed) }

func readSeed(t *testing.T, path string) *corpus.Seed {
	t.Helper()
	s, err := corpus.ReadSeed(path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// script exports s and returns the script's text.
func script(t *testing.T, s *corpus.Seed, opt Options) (*pkt.Export, string) {
	t.Helper()
	x, err := Export(context.Background(), s, "seed.json", opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := pkt.WriteScript(&b, x); err != nil {
		t.Fatal(err)
	}
	return x, b.String()
}

// TestExportedScriptPassesOnTheModel: the script of a known finding,
// run by the interpreter (the native model driven by the script), reaches
// the finding's state at the hit, and with an assert after every ACK it
// follows the replay's path all the way there.
func TestExportedScriptPassesOnTheModel(t *testing.T) {
	native := readKnown(t)
	kernel := readKnown(t)
	kernel.Subject, kernel.Kernel = "linux", "6.18.44"
	for _, tc := range []struct {
		name string
		seed *corpus.Seed
		opt  Options
	}{
		{"native seed", native, Options{}},
		{"native seed, every ACK", native, Options{EveryAck: true}},
		{"linux seed, replayed natively", kernel, Options{}},
		{"native seed, within 200 ms of the hit", native, Options{Within: 200 * time.Millisecond}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, text := script(t, tc.seed, tc.opt)
			if len(x.Acks) == 0 || len(x.Checks) == 0 {
				t.Fatalf("%d ACKs and %d checks: want some of each", len(x.Acks), len(x.Checks))
			}
			last := x.Checks[len(x.Checks)-1]
			if tc.opt.EveryAck {
				// The condition is the last check; before it, the
				// model's exact state after each ACK.
				if len(x.Checks) < len(x.Acks)/2 {
					t.Errorf("%d checks for %d ACKs: want one after (nearly) every ACK", len(x.Checks), len(x.Acks))
				}
			}
			const cond = "tcpi_ca_state == TCP_CA_Recovery and prev_ca_state == TCP_CA_Recovery and tcpi_snd_ssthresh + 0 < prev_ssthresh"
			if tc.opt.Within > 0 {
				if len(x.Acks) <= len(x.Checks)/2 || last.Code[0] != "assert held, (tcpi_snd_cwnd, tcpi_snd_ssthresh, tcpi_ca_state)" ||
					!strings.Contains(text, "held = held or ("+cond+")") {
					t.Errorf("within: %d ACKs, last check %q: want the ACKs after the hit, the condition after each, and an assert that it held", len(x.Acks), last.Code)
				}
			} else {
				if len(last.Code) != 1 || !strings.HasPrefix(last.Code[0], "assert "+cond) {
					t.Errorf("hit check %q: want the condition %q", last.Code, cond)
				}
				if !strings.Contains(last.Comment, "cwnd 67, ssthresh 67, TCP_CA_Recovery") {
					t.Errorf("hit comment %q: want the model's state at the hit", last.Comment)
				}
			}
			s, err := pkt.Parse(text)
			if err != nil {
				t.Fatalf("the script does not parse: %v", err)
			}
			r := pkt.Run(s, pkt.Config{Profile: ccai.ProfileLinux})
			if r.Status != pkt.Pass {
				t.Fatalf("interpreter: %v", r)
			}
		})
	}
}

// TestExportPinsTheHit: a script whose hit assert says the opposite
// fails on the model at that assert, and one that asserts the model's
// exact state instead (a condition TCP_INFO lacks) passes: the asserts are
// what decides.
func TestExportPinsTheHit(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *pkt.Check)
		want pkt.Status
	}{
		{"the condition negated", func(c *pkt.Check) {
			c.Code[0] = "assert not (" + strings.SplitN(strings.TrimPrefix(c.Code[0], "assert "), ", (", 2)[0] + ")"
		}, pkt.Fail},
		{"the exact state", func(c *pkt.Check) {
			c.Code = nil
			c.Asserts = []pkt.Assert{{Field: "tcpi_snd_cwnd", Want: 67}, {Field: "tcpi_snd_ssthresh", Want: 67}, {Field: "tcpi_ca_state", Want: 3}}
		}, pkt.Pass},
		{"the exact state, off by one", func(c *pkt.Check) {
			c.Code = nil
			c.Asserts = []pkt.Assert{{Field: "tcpi_snd_cwnd", Want: 68}}
		}, pkt.Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := script(t, readKnown(t), Options{})
			tc.edit(&x.Checks[len(x.Checks)-1])
			var b bytes.Buffer
			if err := pkt.WriteScript(&b, x); err != nil {
				t.Fatal(err)
			}
			s, err := pkt.Parse(b.String())
			if err != nil {
				t.Fatal(err)
			}
			r := pkt.Run(s, pkt.Config{Profile: ccai.ProfileLinux})
			if r.Status != tc.want {
				t.Fatalf("got %v, want %v", r, tc.want)
			}
		})
	}
}

func TestConditionPython(t *testing.T) {
	for _, tc := range []struct {
		when, while, want string
		prev              []string
	}{
		{`ca_state == "recovery" && prev.ca_state == "recovery" && ssthresh + 0 < prev.ssthresh`, "",
			"tcpi_ca_state == TCP_CA_Recovery and prev_ca_state == TCP_CA_Recovery and tcpi_snd_ssthresh + 0 < prev_ssthresh", []string{"ca_state", "ssthresh"}},
		{`cwnd < 1 || ssthresh < 2 && !(ca_state == "open")`, "", "tcpi_snd_cwnd < 1 or tcpi_snd_ssthresh < 2 and not ( tcpi_ca_state == TCP_CA_Open )", nil},
		{`prev_ca_state == "loss" && cwnd > 2 * prev.cwnd`, "", "prev_ca_state == TCP_CA_Loss and tcpi_snd_cwnd > 2 * prev_cwnd", []string{"ca_state", "cwnd"}},
		{`target > 2 * cwnd`, "", "", nil},                   // CUBIC's target: not in TCP_INFO
		{`ca_state in ["recovery", "cwr"]`, "", "", nil},     // an operator the translation lacks
		{`cwnd > p.bw`, "", "", nil},                         // a parameter
		{`cwnd > first.cwnd`, `ca_state == "open"`, "", nil}, // a stretch
		{`ca_state == "sleeping"`, "", "", nil},              // no such state
	} {
		f := &corpus.Finding{When: tc.when, While: tc.while}
		got, prev, ok := conditionPython(f)
		if ok != (tc.want != "") || got != tc.want || strings.Join(prev, ",") != strings.Join(tc.prev, ",") {
			t.Errorf("%s: got %q %v %v, want %q %v", tc.when, got, prev, ok, tc.want, tc.prev)
		}
	}
}

func TestExportRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(s *corpus.Seed)
	}{
		{"ns3 subject", "subject", func(s *corpus.Seed) { s.Subject = "ns3" }},
		{"gvisor subject", "subject", func(s *corpus.Seed) { s.Subject = "gvisor" }},
		{"linux-3.10 profile", "profile", func(s *corpus.Seed) { s.Profile = "linux-3.10" }},
		{"no finding", "finding", func(s *corpus.Seed) { s.Finding = nil }},
		{"a fault", "finding.kind", func(s *corpus.Seed) { s.Finding.Kind = "panic" }},
		{"two flows", "ccai", func(s *corpus.Seed) { s.CCAI = []string{"cubic", "cubic"} }},
		{"a witness", "witness", func(s *corpus.Seed) { s.Witness = &corpus.Witness{} }},
		{"--within on what TCP_INFO lacks", "--within", func(s *corpus.Seed) { s.Finding.When = "target > 2 * cwnd" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := readKnown(t)
			tc.edit(s)
			_, err := Export(context.Background(), s, "seed.json", Options{Within: time.Second})
			var re *RefusedError
			if !errors.As(err, &re) || !strings.HasPrefix(re.Reason, tc.want) {
				t.Fatalf("got %v, want a refusal naming %q", err, tc.want)
			}
		})
	}
}

// TestExportNotReproduced: a seed whose recorded hit the model does not
// reach has nothing to script.
func TestExportNotReproduced(t *testing.T) {
	s := readKnown(t)
	s.Finding.TimeNS += 1e9
	_, err := Export(context.Background(), s, "seed.json", Options{})
	var nr *NotReproducedError
	if !errors.As(err, &nr) {
		t.Fatalf("got %v, want NotReproducedError", err)
	}
}

// TestCaptureKeepsFlowAndWindow: the tap records one flow up to its time.
func TestCaptureKeepsFlowAndWindow(t *testing.T) {
	c := &pkt.Capture{Flow: 0, Until: 100}
	data := &sim.Packet{Seq: 0, Len: 1448}
	ack := &sim.Packet{IsAck: true, Ack: 1448, NSACK: 1, SACK: [4]sim.SACKBlock{{Start: 2896, End: 4344}}, TSEcr: 5}
	c.SenderSent(0, 10, data)
	c.SenderSent(1, 10, data)                   // another flow
	c.SenderSent(0, 10, &sim.Packet{SYN: true}) // the handshake
	c.SenderReceived(0, 50, ack)
	c.SenderReceived(0, 101, ack) // after Until
	if len(c.Sends) != 1 || c.Sends[0].End != 1448 || c.SynAt != 10 {
		t.Errorf("sends %+v syn at %v: want one segment 0:1448 and the SYN at 10", c.Sends, c.SynAt)
	}
	if len(c.Acks) != 1 || c.Acks[0].Ack != 1448 || len(c.Acks[0].SACK) != 1 || c.Acks[0].TSEcr != 5 {
		t.Errorf("acks %+v: want one ACK of 1448 with its SACK block and echo", c.Acks)
	}
}

// TestExportedScriptOnTheKernel runs the known finding's script with
// packetdrill on the running kernel, in its own network namespace
// (bench/pkt-kernel.sh). It needs root and bin/packetdrill (make
// packetdrill) and skips without them. The script must run unmodified:
// packetdrill accepts it, the handshake and every ACK, and it ends either
// passing or at one of its asserts, never on a script error (or, on a
// loaded machine, late for an ACK: logged, inconclusive). Whether the
// kernel held is logged: the kernel is not the model (docs/packetdrill.md).
func TestExportedScriptOnTheKernel(t *testing.T) {
	root, _ := filepath.Abs("../..")
	pd := filepath.Join(root, "bin/packetdrill")
	if os.Geteuid() != 0 {
		t.Skip("needs root: packetdrill makes a TUN device in a network namespace")
	}
	if _, err := os.Stat(pd); err != nil {
		t.Skipf("no %s: run `make packetdrill`", pd)
	}
	// The run has a private /tmp: the script lives under .build.
	dir := filepath.Join(root, ".build/pktexport-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, seed string
		opt        Options
	}{
		{"cubic-ssthresh-steady", knownSeed, Options{}},
		{"cubic-ssthresh-steady.every", knownSeed, Options{EveryAck: true}},
		{"cubic-hystart-in-recovery-40mbit.within", kernelSeed, Options{Within: 200 * time.Millisecond}},
	} {
		_, text := script(t, readSeed(t, tc.seed), tc.opt)
		path := filepath.Join(dir, tc.name+".pkt")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		logs := filepath.Join(dir, "logs")
		cmd := exec.Command(filepath.Join(root, "bench/pkt-kernel.sh"), "1", path)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "LOGDIR="+logs)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatalf("bench/pkt-kernel.sh: %v\n%s", err, out)
		}
		log, rerr := os.ReadFile(filepath.Join(logs, strings.TrimSuffix(filepath.Base(path), ".pkt")+".1.log"))
		if rerr != nil {
			t.Fatal(rerr)
		}
		switch {
		case err == nil:
			t.Logf("%s: the kernel held the finding's asserts", filepath.Base(path))
		case bytes.Contains(log, []byte("AssertionError")):
			t.Logf("%s: the kernel ran the script and did not hold an assert:\n%s", filepath.Base(path), lastLines(log, 6))
		case bytes.Contains(log, []byte("timing error")):
			// packetdrill woke too late for an ACK on a loaded
			// machine: the run says nothing about the script.
			t.Logf("%s: packetdrill was late on this machine (load), inconclusive:\n%s", filepath.Base(path), lastLines(log, 2))
		default:
			t.Errorf("%s: packetdrill did not run the script to its asserts:\n%s", filepath.Base(path), lastLines(log, 10))
		}
	}
}

func lastLines(b []byte, n int) string {
	l := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.Join(l[max(len(l)-n, 0):], "\n")
}
