// Package pktexport writes a finding seed as a packetdrill script of the
// sender side (issue 49 item 4, `actfuzz export SEED --pkt`): the seed is
// replayed on the native model with a packet tap (netenv.PacketTap), and
// the ACKs the sender received up to the hit become the script's peer,
// with an assert of the finding's state over TCP_INFO at the hit
// (netenv/pkt WriteScript). A kernel developer runs it with packetdrill on
// a stock kernel; `actfuzz pkt` runs it on the native model.
package pktexport

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
	"github.com/actfuzz/actfuzz/netenv/pkt"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// RefusedError is a seed the exporter cannot express (bad input: `actfuzz
// export` exits 2 with it).
type RefusedError struct{ Reason string }

func (e *RefusedError) Error() string { return e.Reason }

func refuse(format string, a ...any) error {
	return &RefusedError{Reason: fmt.Sprintf(format, a...)}
}

// NotReproducedError is a seed whose finding the native model does not
// reach: there is no packet trace to script (`actfuzz export` exits 1).
type NotReproducedError struct{ Diff []string }

func (e *NotReproducedError) Error() string {
	return "the native model does not reach the finding on this seed, so there is no packet trace to script: " + strings.Join(e.Diff, "; ")
}

// Check refuses a seed the exporter cannot express: another subject than
// the native model at profile linux or the kernel, no condition finding,
// more than one flow.
func Check(s *corpus.Seed) error {
	switch {
	case s.Subject != "native" && s.Subject != "linux":
		return refuse("subject %q: a packetdrill script drives a Linux kernel; export takes seeds of the native subject at profile linux or of the linux subject", s.Subject)
	case s.Subject == "native" && s.Profile != ccai.ProfileLinux.String():
		return refuse("profile %q: the script drives a current Linux kernel; export takes native seeds at profile linux", s.Profile)
	case s.Witness != nil:
		return refuse("witness: a symbolic witness seed has no campaign configuration to replay")
	case s.Finding == nil:
		return refuse("finding: the seed records no finding, so there is no hit to assert")
	case s.Finding.Kind != "condition":
		return refuse("finding.kind %q: only a condition's hit can be asserted over TCP_INFO", s.Finding.Kind)
	case len(s.CCAI) != 1:
		return refuse("ccai: %d flows: a packetdrill script plays one connection's peer (a shared bottleneck's other flows cannot be scripted)", len(s.CCAI))
	}
	if _, ok := ccai.Lookup(s.CCAI[0]); !ok {
		return refuse("ccai: %q has no native model to replay the seed on", s.CCAI[0])
	}
	return nil
}

// record is a flow-0 state record with the ACKs received by then.
type record struct {
	at             time.Duration
	reason         observe.Reason
	cwnd, ssthresh uint32
	caState        ccai.CAState
	acks           int
}

// recorder keeps the state records up to the hit.
type recorder struct {
	capture *pkt.Capture
	recs    []record
}

func (r *recorder) Observe(rec *observe.Record) {
	if rec.Flow != 0 || rec.Time > r.capture.Until {
		return
	}
	r.recs = append(r.recs, record{at: rec.Time, reason: rec.Reason, cwnd: rec.Cwnd, ssthresh: rec.SSThresh,
		caState: rec.CAState, acks: len(r.capture.Acks)})
}

// tapped is the native subject with a packet tap.
type tapped struct {
	netenv.Native
	tap netenv.PacketTap
}

func (t tapped) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	cfg.PacketTap = t.tap
	return t.Native.Run(ctx, cfg, obs)
}

// Options are export's choices.
type Options struct {
	// EveryAck asserts the model's cwnd, ssthresh and ca_state after
	// every ACK, not only at the hit: the first failing assert is where
	// the kernel (or the interpreter) left the model's path.
	EveryAck bool
	// Within scripts the ACKs of this long after the hit too and asserts
	// that the condition held at some ACK from the hit's to the last:
	// the kernel may show the behaviour an ACK or two from where the
	// model did. Only for a condition over TCP_INFO (condition.go).
	Within time.Duration
}

// Export replays the seed on the native model and returns its script;
// name is the seed's path, for the script's header.
func Export(ctx context.Context, s *corpus.Seed, name string, opt Options) (*pkt.Export, error) {
	if err := Check(s); err != nil {
		return nil, err
	}
	f := s.Finding
	if _, _, ok := conditionPython(f); opt.Within > 0 && !ok {
		return nil, refuse("--within: the condition %q is not an expression over TCP_INFO, so whether it held after the hit cannot be asserted", f.When)
	}
	capture := &pkt.Capture{Flow: 0, Until: time.Duration(f.TimeNS) + opt.Within}
	rec := &recorder{capture: capture}
	res, err := corpus.ReplayWith(ctx, tapped{tap: capture}, s, rec)
	if err != nil {
		return nil, fmt.Errorf("native replay: %w", err)
	}
	if !res.Reproduced {
		return nil, &NotReproducedError{Diff: res.Diff}
	}
	hit, ok := hitRecord(rec.recs, res)
	if !ok {
		return nil, fmt.Errorf("native replay: no state record at the hit (%v) holds the hit's state %v", time.Duration(res.HitTimeNS), res.HitState)
	}
	refs, err := f.Spec().Refs()
	if err != nil {
		return nil, refuse("finding: %v", err)
	}
	x := &pkt.Export{Congestion: s.CCAI[0], MSS: tcp.DefaultMSS, SACK: s.SACK, ECN: netenv.UsesECN(s.Schedule)}
	env0 := corpus.EnvAt(s.Schedule, 0)
	x.HandshakeRTT = time.Duration(2 * env0.Delay * float64(time.Millisecond))
	if capture.SynAckAt > 0 {
		x.HandshakeRTT = capture.SynAckAt - capture.SynAt
	}
	if len(capture.Sends) > 0 {
		x.Start = capture.Sends[0].At
	}
	x.Acks = capture.Acks[:hit.acks]
	if opt.Within > 0 {
		x.Acks = capture.Acks
	}
	var sent uint64
	for _, sd := range capture.Sends {
		sent = max(sent, sd.End)
	}
	// The application's bytes: what the model sent by the hit and two
	// windows more, so that the kernel is never short of data before the
	// hit (the model's transfer is longer; a kernel with less data would
	// be application-limited, which stops cwnd growth, RFC 7661).
	x.Write = min(s.Bytes, sent+2*uint64(max(hit.cwnd, tcp.DefaultInitCwnd))*uint64(x.MSS))
	// The send buffer takes the write at once (packetdrill's write is not
	// expected to block): skbs cost about 1.6 times their payload.
	x.SndBuf = max(uint64(tcp.DefaultSndBuf), (3*x.Write+(1<<20)-1)/(1<<20)<<20)
	x.Checks = checks(rec.recs, hit, refs, f)
	if opt.Within > 0 {
		x.Checks = within(x.Checks, f, len(x.Acks), capture.Acks)
	}
	if opt.EveryAck {
		x.Checks = append(everyAck(rec.recs, hit), x.Checks...)
	}
	x.Header = header(s, name, refs, hit, x, opt.Within)
	return x, nil
}

// hitRecord is the record the finding's condition first held at: the
// first at the hit's time with the hit's cwnd, ssthresh and ca_state.
func hitRecord(recs []record, res *corpus.ReplayResult) (record, bool) {
	for i := range recs {
		r := recs[i]
		if int64(r.at) != res.HitTimeNS {
			continue
		}
		st := res.HitState
		if fmt.Sprint(st["cwnd"]) == fmt.Sprint(float64(r.cwnd)) && fmt.Sprint(st["ssthresh"]) == fmt.Sprint(float64(r.ssthresh)) &&
			fmt.Sprint(st["ca_state"]) == r.caState.String() {
			return r, true
		}
	}
	return record{}, false
}

// checks are the script's asserts at the hit. When the condition reads
// only what TCP_INFO has (condition.go), it is the assert, with prev.*
// saved before the hit's ACK, and the model's exact state is a comment;
// else the model's cwnd, ssthresh and ca_state at the hit are asserted
// (the nearest), and before the hit's ACK those of them the condition
// reads as prev.*. "Before the hit's ACK" is the kernel's state between
// two ACKs: a record inside one ACK, such as a change of ca_state before
// the growth, is not observable by packetdrill.
func checks(recs []record, hit record, refs corpus.ExprRefs, f *corpus.Finding) []pkt.Check {
	var out []pkt.Check
	expr, prevNames, expressible := conditionPython(f)
	if !expressible {
		prevNames = nil
		for _, n := range tcpInfoOrder {
			if slices.Contains(refs.Prev, n) || (n == "ca_state" && slices.Contains(refs.Cur, "prev_ca_state")) {
				prevNames = append(prevNames, n)
			}
		}
	}
	if prev, ok := stateBefore(recs, hit); ok && len(prevNames) > 0 {
		c := pkt.Check{AfterAcks: prev.acks, At: prev.at}
		for _, n := range prevNames {
			if expressible {
				c.Code = append(c.Code, fmt.Sprintf("prev_%s = %s  # the model: %s", n, tcpInfoVars[n], modelValue(n, prev)))
			} else {
				c.Asserts = append(c.Asserts, assertOf(tcpInfoVars[n], prev))
			}
		}
		c.Comment = "Before the ACK of the hit: the condition's prev.*."
		if !expressible {
			c.Comment += " (the model's values)"
		}
		out = append(out, c)
	}
	at := pkt.Check{AfterAcks: hit.acks, At: hit.at,
		Comment: fmt.Sprintf("The hit (%s record at %.6f s of the run).", hit.reason, hit.at.Seconds())}
	if hit.reason == observe.ReasonRTO || hit.reason == observe.ReasonIdle {
		// A timer's state: the kernel's timer runs in jiffies (4 ms at
		// HZ=250) and a little late; the assert waits for it.
		at.At += timerSlack
		at.Comment += fmt.Sprintf("\nA timer reached it: the assert waits %v more for the kernel's timer (jiffies).", timerSlack)
	}
	if expressible {
		at.Comment += "\nThe finding's condition over TCP_INFO; the model had " + modelState(hit) + "."
		at.Code = append(at.Code, fmt.Sprintf("assert %s, (tcpi_snd_cwnd, tcpi_snd_ssthresh, tcpi_ca_state)", expr))
		return append(out, at)
	}
	at.Comment += "\nThe model's state, for which the condition held (TCP_INFO lacks what else it reads)."
	for _, n := range tcpInfoOrder {
		at.Asserts = append(at.Asserts, assertOf(tcpInfoVars[n], hit))
	}
	return append(out, at)
}

// modelValue is a record's value of a TCP_INFO variable, as the script
// writes it.
func modelValue(name string, r record) string {
	switch name {
	case "cwnd":
		return fmt.Sprint(r.cwnd)
	case "ssthresh":
		return fmt.Sprint(r.ssthresh)
	}
	return pkt.CAStateName(r.caState)
}

func modelState(r record) string {
	return fmt.Sprintf("cwnd %d, ssthresh %d, %s", r.cwnd, r.ssthresh, pkt.CAStateName(r.caState))
}

// within replaces the hit's assert (the last check) with the condition's
// evaluation after each ACK from the hit's to the last, and an assert
// that it held at one of them.
func within(cs []pkt.Check, f *corpus.Finding, n int, acks []pkt.CapturedAck) []pkt.Check {
	expr, prev, _ := conditionPython(f)
	hit := cs[len(cs)-1]
	cs = cs[:len(cs)-1]
	save := make([]string, len(prev))
	for i, p := range prev {
		save[i] = fmt.Sprintf("prev_%s = %s", p, tcpInfoVars[p])
	}
	for i := hit.AfterAcks; i <= n; i++ {
		c := pkt.Check{AfterAcks: i, At: acks[i-1].At}
		if i == hit.AfterAcks {
			c.Comment, c.At = hit.Comment+"\nFrom here, whether the condition holds at any ACK within the exported time.", hit.At
			c.Code = append(c.Code, fmt.Sprintf("held = %s", expr))
		} else {
			c.Code = append(c.Code, fmt.Sprintf("held = held or (%s)", expr))
		}
		cs = append(cs, pkt.Check{AfterAcks: c.AfterAcks, At: c.At, Comment: c.Comment, Code: append(c.Code, save...)})
	}
	return append(cs, pkt.Check{AfterAcks: n, At: acks[n-1].At, Comment: "The condition held at one of those ACKs.",
		Code: []string{"assert held, (tcpi_snd_cwnd, tcpi_snd_ssthresh, tcpi_ca_state)"}})
}

// everyAck asserts the state after each ACK before the hit's.
func everyAck(recs []record, hit record) []pkt.Check {
	var out []pkt.Check
	for i, r := range recs {
		last := i+1 == len(recs) || recs[i+1].acks != r.acks
		if !last || r.acks == 0 || r.acks >= hit.acks-1 {
			continue
		}
		out = append(out, pkt.Check{AfterAcks: r.acks, At: r.at, Asserts: []pkt.Assert{
			assertOf("tcpi_snd_cwnd", r), assertOf("tcpi_snd_ssthresh", r), assertOf("tcpi_ca_state", r)}})
	}
	return out
}

// timerSlack is how long after the model's timer a timer-reached state is
// asserted on the kernel: two jiffies at HZ=250 and its timer slack.
const timerSlack = 10 * time.Millisecond

// stateBefore is the state before the hit as the kernel shows it: the
// last record of an earlier ACK when an ACK brought the hit, the last
// record before the hit's time when a timer did.
func stateBefore(recs []record, hit record) (record, bool) {
	timer := hit.reason == observe.ReasonRTO || hit.reason == observe.ReasonIdle
	for i := len(recs) - 1; i >= 0; i-- {
		r := recs[i]
		if (timer && r.at < hit.at) || (!timer && r.acks < hit.acks) {
			return r, true
		}
	}
	return record{}, false
}

func assertOf(field string, r record) pkt.Assert {
	switch field {
	case "tcpi_snd_cwnd":
		return pkt.Assert{Field: field, Want: int64(r.cwnd)}
	case "tcpi_snd_ssthresh":
		a := pkt.Assert{Field: field, Want: int64(r.ssthresh)}
		if r.ssthresh == ccai.InfiniteSSThresh {
			a.Comment = "TCP_INFINITE_SSTHRESH: no reduction yet"
		}
		return a
	}
	return pkt.Assert{Field: field, Want: int64(r.caState)}
}

// header is the script's top comment: what was found, how the script
// reproduces it, and what it cannot say.
func header(s *corpus.Seed, name string, refs corpus.ExprRefs, hit record, x *pkt.Export, within time.Duration) []string {
	f := s.Finding
	h := []string{
		fmt.Sprintf("actfuzz finding: %s, exported by `actfuzz export --pkt` (%s) from %s.", f.Condition, corpus.ProgramVersion(), name),
	}
	if f.Source != "" {
		h = append(h, "Checks: "+f.Source)
	}
	h = append(h, "Condition: "+f.When)
	if f.While != "" {
		h = append(h, fmt.Sprintf("  while %s for %s", f.While, f.For))
	}
	upTo := "the hit"
	if within > 0 {
		upTo = fmt.Sprintf("%v after the hit", within)
	}
	subj := "native model, profile " + s.Profile
	if s.Subject == "linux" {
		subj = "Linux subject (kernel " + s.Kernel + "), replayed on the native model for its packets"
	}
	h = append(h, fmt.Sprintf("Seed: %s, %s, seed %d; hit at %.6f s of the run (%s record).", subj, s.CCAI[0], s.Seed, hit.at.Seconds(), hit.reason),
		"",
		"The script plays the receiver: the handshake, then every ACK the model's",
		fmt.Sprintf("sender received up to %s (%d), at its recorded time, with its SACK", upTo, len(x.Acks)),
		"blocks and ECN echo. The kernel's data segments are not scripted (PSH,",
		"jiffy timing and RACK/TLP would fail the script on what is not the finding);",
		"the %{ assert }% blocks check the congestion state where the model had it.",
		"An assert that fails says where the kernel's state left the model's.")
	var lacks []string
	for _, n := range slices.Concat(refs.Cur, refs.Prev, refs.First, refs.Window) {
		if _, has := tcpInfoVars[n]; !has && n != "prev_ca_state" && n != "reason" && !slices.Contains(lacks, n) {
			lacks = append(lacks, n)
		}
	}
	for _, p := range refs.Params {
		lacks = append(lacks, "p."+p)
	}
	if _, _, ok := conditionPython(f); !ok {
		why := "TCP_INFO lacks what the condition reads (" + strings.Join(lacks, ", ") + "),"
		if len(lacks) == 0 {
			why = "The condition is not an expression over TCP_INFO (a stretch, or an operator),"
		}
		h = append(h, "", why, "so the script asserts the nearest: the model's cwnd, ssthresh and ca_state at the hit.")
	}
	var from time.Duration
	for _, ph := range s.Schedule {
		// A phase that began by the hit, with an application slower than
		// the link.
		if from > hit.at {
			break
		}
		from = ph.Until
		if ph.Env.App < ph.Env.BW {
			h = append(h, "", fmt.Sprintf("The application's rate (%.3f Mbit/s in a phase) is not scripted: the kernel", ph.Env.App),
				fmt.Sprintf("has all %d bytes at once, the model's sender did not.", x.Write))
			break
		}
	}
	return h
}
