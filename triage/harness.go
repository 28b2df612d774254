package triage

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/linux"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// harnessObserver watches a replay for what rules out our harness: the
// round trips the configured delays imply, and whether the finding's flow
// was send-buffer limited at its hit.
type harnessObserver struct {
	cfg      netenv.Config
	flow     int
	hitNS    int64
	minSRTT  time.Duration
	atHit    tcp.StateRecord
	seenHit  bool
	concerns bool // the condition reads in_flight: being limited is its subject
}

func newHarness(cfg netenv.Config, f *corpus.Finding) *harnessObserver {
	return &harnessObserver{cfg: cfg, flow: f.Flow, hitNS: f.TimeNS,
		concerns: strings.Contains(f.When+" "+f.While, "in_flight")}
}

// observer is h as an observer, nil when h is.
func observer(h *harnessObserver) tcp.Observer {
	if h == nil {
		return nil
	}
	return h
}

func (h *harnessObserver) Observe(r *tcp.StateRecord) {
	if r.SRTT > 0 && (h.minSRTT == 0 || r.SRTT < h.minSRTT) {
		h.minSRTT = r.SRTT
	}
	if int(r.Flow) == h.flow && r.Time.Nanoseconds() <= h.hitNS {
		h.atHit = *r
		h.atHit.Vars = nil
		h.seenHit = true
	}
}

// check returns the checks that failed and notes on those that passed or
// could not be made.
func (h *harnessObserver) check(res netenv.Result) (fails, notes []string) {
	cfg := h.cfg
	if res.Capped {
		fails = append(fails, "the replay was capped: "+res.CapReason)
	}
	// Delays: no round trip shorter than twice the smallest configured
	// one-way propagation delay (RFC 6298 §2: srtt smooths samples, so
	// it is never below the least of them).
	minDelay := -1.0
	var lossSum float64
	for _, p := range cfg.Schedule {
		if minDelay < 0 || p.Env.Delay < minDelay {
			minDelay = p.Env.Delay
		}
		lossSum += p.Env.Loss
	}
	floor := time.Duration(2 * minDelay * 0.9 * float64(time.Millisecond))
	switch {
	case h.minSRTT == 0:
		notes = append(notes, "delays: no RTT sample to check")
	case minDelay > 0 && h.minSRTT < floor:
		fails = append(fails, fmt.Sprintf("delays: srtt fell to %v, below twice the smallest configured delay (%.1f ms)", h.minSRTT, minDelay))
	default:
		notes = append(notes, fmt.Sprintf("delays: min srtt %v ≥ 2 × %.1f ms configured", h.minSRTT, minDelay))
	}
	// Losses: a configured random loss rate that should have dropped at
	// least 10 packets and dropped none did not happen.
	var sent uint64
	for _, f := range res.Flows {
		sent += f.SegmentsSent
	}
	if n := len(cfg.Schedule); n > 0 {
		expect := lossSum / float64(n) * float64(sent)
		if expect >= 10 && res.Losses == 0 {
			fails = append(fails, fmt.Sprintf("losses: the configured loss rate should have lost about %.0f of %d segments and lost none", expect, sent))
		} else {
			notes = append(notes, fmt.Sprintf("losses: %d random losses, %d queue drops of %d segments (about %.0f expected at the configured rate)", res.Losses, res.Drops, sent, expect))
		}
	}
	// Send buffer: in flight at the hit against the send buffer (the
	// subject's records carry no receive window: not checked).
	if h.seenHit {
		inBytes := uint64(h.atHit.InFlight) * tcp.DefaultMSS
		limited := inBytes >= tcp.DefaultSndBuf*9/10
		switch {
		case limited && !h.concerns:
			fails = append(fails, fmt.Sprintf("send buffer: %d packets in flight at the hit fill the %d-byte send buffer, and the condition is not about it", h.atHit.InFlight, tcp.DefaultSndBuf))
		default:
			notes = append(notes, fmt.Sprintf("send buffer: %d packets in flight at the hit (limited: %v)", h.atHit.InFlight, limited))
		}
	}
	notes = append(notes, "receive window: not in the subject's records, not checked")
	return fails, notes
}

// lateStats is a subject whose emulator measures how late it delivers
// packets against its link model (the kernel subject: linux.Stats.Late).
type lateStats interface{ LastStats() linux.Stats }

// lateness checks the kernel emulator's one-way delay error of the run
// just made: its p99 must stay under a fifth of the smallest configured
// one-way delay (netenv/linux/doc.go measures 25–300 µs medians and a
// p99 of 1.3–14 ms on a loaded machine), or the delays the finding saw
// were not the configured ones.
func lateness(subj netenv.Subject, cfg netenv.Config) (fail, note string) {
	ls, ok := subj.(lateStats)
	if !ok {
		return "", ""
	}
	late := slices.Clone(ls.LastStats().Late)
	if len(late) == 0 {
		return "", "emulator lateness: no packet sampled"
	}
	slices.Sort(late)
	p50, p99 := late[len(late)/2], late[len(late)*99/100]
	minDelay := -1.0
	for _, p := range cfg.Schedule {
		if minDelay < 0 || p.Env.Delay < minDelay {
			minDelay = p.Env.Delay
		}
	}
	bound := time.Duration(minDelay / 5 * float64(time.Millisecond))
	msg := fmt.Sprintf("emulator lateness: median %v, p99 %v over %d packets, against a bound of %v (a fifth of the %.1f ms one-way delay)", p50, p99, len(late), bound, minDelay)
	if p99 > bound {
		return msg, ""
	}
	return "", msg
}
