package ns3

import (
	"context"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// DiffOptions tune a differential check. Zero fields take the defaults.
type DiffOptions struct {
	// Points is how many evenly spaced time points compare cwnd (20).
	Points int
	// ThroughputTol is the relative throughput difference reported as a
	// disagreement (0.10).
	ThroughputTol float64
	// CwndTol is the relative cwnd difference at a time point counted as a
	// disagreement (0.25); differences of 2 packets or less never count.
	CwndTol float64
	// LossTol is the relative difference of loss events (recoveries plus
	// timeouts) reported as a disagreement (0.5); differences of 2 or less
	// never count.
	LossTol float64
	// Unaligned compares cwnd at the same absolute times. By default each
	// flow's time points are counted from its first state record, which
	// cancels ns-3's handshake (about one RTT that the native subject,
	// which starts established, does not spend).
	Unaligned bool
}

func (o *DiffOptions) defaults() {
	if o.Points <= 0 {
		o.Points = 20
	}
	if o.ThroughputTol <= 0 {
		o.ThroughputTol = 0.10
	}
	if o.CwndTol <= 0 {
		o.CwndTol = 0.25
	}
	if o.LossTol <= 0 {
		o.LossTol = 0.5
	}
}

// DiffSide is one subject's run in a differential check.
type DiffSide struct {
	Subject     string   `json:"subject"`
	CCAs        []string `json:"ccas"`
	SimTimeS    float64  `json:"sim_time_s"`
	WallS       float64  `json:"wall_s"`
	Events      uint64   `json:"events"`
	Records     int      `json:"records"`
	Drops       uint64   `json:"drops"`
	Losses      uint64   `json:"losses"`
	Capped      bool     `json:"capped"`
	TraceSHA256 string   `json:"trace_sha256"`
}

// DiffPoint compares the two subjects' state at one time.
type DiffPoint struct {
	TimeS    float64    `json:"time_s"`
	Cwnd     [2]uint32  `json:"cwnd"`
	SSThresh [2]uint32  `json:"ssthresh"`
	SRTTms   [2]float64 `json:"srtt_ms"`
	CAState  [2]string  `json:"ca_state"`
	Differs  bool       `json:"differs"`
}

// FlowDiff compares one flow.
type FlowDiff struct {
	Flow           int                  `json:"flow"`
	CCA            [2]string            `json:"cca"`
	ThroughputMbps [2]float64           `json:"throughput_mbps"`
	ThroughputDiff float64              `json:"throughput_rel_diff"` // (b − a) / a
	DoneAtS        [2]float64           `json:"done_at_s"`
	Done           [2]bool              `json:"done"`
	SegmentsSent   [2]uint64            `json:"segments_sent"`
	Retransmits    [2]uint64            `json:"retransmits"`
	Recoveries     [2]uint64            `json:"recoveries"`
	Timeouts       [2]uint64            `json:"timeouts"`
	LossEvents     [2]uint64            `json:"loss_events"` // recoveries + timeouts
	FirstRecordS   [2]float64           `json:"first_record_s"`
	Points         []DiffPoint          `json:"points"`
	CwndDiffers    int                  `json:"cwnd_points_differing"`
	FirstCwndDiffS float64              `json:"first_cwnd_diff_s"` // -1: none
	Final          [2]netenv.FinalState `json:"final"`
}

// DiffReport is the outcome of Diff: both runs and where they disagree.
type DiffReport struct {
	Seed          uint64          `json:"seed"`
	Schedule      netenv.Schedule `json:"schedule"`
	Aligned       bool            `json:"aligned"` // time points count from each flow's first record
	A             DiffSide        `json:"a"`
	B             DiffSide        `json:"b"`
	Flows         []FlowDiff      `json:"flows"`
	Disagreements []string        `json:"disagreements"`
}

// Agree is true when no disagreement beyond the tolerances was found.
func (r *DiffReport) Agree() bool { return len(r.Disagreements) == 0 }

// Diff runs cfg on subjects a and b and compares throughput, loss events
// and cwnd at time points, with the default options. Each flow's CCA is
// translated for each subject (CCAFor), so the same configuration names
// "cubic" for the native subject and TcpCubic for ns-3.
func Diff(ctx context.Context, cfg netenv.Config, a, b netenv.Subject) (*DiffReport, error) {
	return DiffWith(ctx, cfg, a, b, DiffOptions{})
}

// series records every state record of a run, per flow.
type series struct {
	flows [][]sample
}

type sample struct {
	t        time.Duration
	cwnd     uint32
	ssthresh uint32
	srtt     time.Duration
	ca       ccai.CAState
}

func (s *series) Observe(rec *observe.Record) {
	for int(rec.Flow) >= len(s.flows) {
		s.flows = append(s.flows, nil)
	}
	s.flows[rec.Flow] = append(s.flows[rec.Flow], sample{rec.Time, rec.Cwnd, rec.SSThresh, rec.SRTT, rec.CAState})
}

// at is the state in force at time t: the last sample at or before t (the
// first sample before it).
func at(ss []sample, t time.Duration) (sample, bool) {
	if len(ss) == 0 {
		return sample{}, false
	}
	i := sort.Search(len(ss), func(i int) bool { return ss[i].t > t })
	if i == 0 {
		return ss[0], true
	}
	return ss[i-1], true
}

// DiffWith is Diff with options.
func DiffWith(ctx context.Context, cfg netenv.Config, a, b netenv.Subject, opt DiffOptions) (*DiffReport, error) {
	opt.defaults()
	subjects := [2]netenv.Subject{a, b}
	var res [2]netenv.Result
	var ser [2]series
	var ccas [2][]string
	for k, s := range subjects {
		c := cfg
		c.HashTrace = true
		c.Flows = append([]netenv.Flow(nil), cfg.Flows...)
		for i := range c.Flows {
			c.Flows[i].CCA = CCAFor(s.Name(), c.Flows[i].CCA)
			ccas[k] = append(ccas[k], c.Flows[i].CCA)
		}
		r, err := s.Run(ctx, c, &ser[k])
		if err != nil {
			return nil, fmt.Errorf("%s subject: %w", s.Name(), err)
		}
		res[k] = r
	}
	rep := &DiffReport{Seed: cfg.Seed, Schedule: cfg.Schedule, Aligned: !opt.Unaligned}
	for k, side := range []*DiffSide{&rep.A, &rep.B} {
		r := &res[k]
		*side = DiffSide{Subject: subjects[k].Name(), CCAs: ccas[k], SimTimeS: r.SimTime.Seconds(), WallS: r.Wall.Seconds(),
			Events: r.Events, Drops: r.Drops, Losses: r.Losses, Capped: r.Capped, TraceSHA256: r.TraceSHA256}
		for _, f := range ser[k].flows {
			side.Records += len(f)
		}
	}
	names := [2]string{rep.A.Subject, rep.B.Subject}
	if names[0] == names[1] {
		names = [2]string{"a", "b"}
	}
	for i := range cfg.Flows {
		fa, fb := res[0].Flows[i], res[1].Flows[i]
		fd := FlowDiff{Flow: i, CCA: [2]string{ccas[0][i], ccas[1][i]}, FirstCwndDiffS: -1,
			DoneAtS:      [2]float64{fa.DoneAtS, fb.DoneAtS},
			Done:         [2]bool{fa.Done, fb.Done},
			SegmentsSent: [2]uint64{fa.SegmentsSent, fb.SegmentsSent},
			Retransmits:  [2]uint64{fa.Retransmits, fb.Retransmits},
			Recoveries:   [2]uint64{fa.Recoveries, fb.Recoveries},
			Timeouts:     [2]uint64{fa.Timeouts, fb.Timeouts},
			LossEvents:   [2]uint64{fa.Recoveries + fa.Timeouts, fb.Recoveries + fb.Timeouts},
			Final:        [2]netenv.FinalState{fa.Final, fb.Final},
		}
		for k, fr := range []netenv.FlowResult{fa, fb} {
			t := res[k].SimTime.Seconds()
			if fr.Done && fr.DoneAtS > 0 {
				t = fr.DoneAtS
			}
			if t > 0 {
				fd.ThroughputMbps[k] = float64(fr.DeliveredBytes) * 8 / t / 1e6
			}
			if i < len(ser[k].flows) && len(ser[k].flows[i]) > 0 {
				fd.FirstRecordS[k] = ser[k].flows[i][0].t.Seconds()
			}
		}
		if fd.ThroughputMbps[0] > 0 {
			fd.ThroughputDiff = (fd.ThroughputMbps[1] - fd.ThroughputMbps[0]) / fd.ThroughputMbps[0]
		}
		var sa, sb []sample
		if i < len(ser[0].flows) {
			sa = ser[0].flows[i]
		}
		if i < len(ser[1].flows) {
			sb = ser[1].flows[i]
		}
		var off [2]time.Duration
		if !opt.Unaligned && len(sa) > 0 && len(sb) > 0 {
			off = [2]time.Duration{sa[0].t, sb[0].t}
		}
		end := min(res[0].SimTime-off[0], res[1].SimTime-off[1])
		for p := 1; p <= opt.Points && end > 0; p++ {
			t := end * time.Duration(p) / time.Duration(opt.Points)
			x, okA := at(sa, off[0]+t)
			y, okB := at(sb, off[1]+t)
			if !okA || !okB {
				continue
			}
			pt := DiffPoint{TimeS: t.Seconds(), Cwnd: [2]uint32{x.cwnd, y.cwnd}, SSThresh: [2]uint32{x.ssthresh, y.ssthresh},
				SRTTms:  [2]float64{float64(x.srtt) / 1e6, float64(y.srtt) / 1e6},
				CAState: [2]string{x.ca.String(), y.ca.String()}}
			d := math.Abs(float64(x.cwnd) - float64(y.cwnd))
			if d > 2 && d > opt.CwndTol*math.Max(float64(x.cwnd), float64(y.cwnd)) {
				pt.Differs = true
				fd.CwndDiffers++
				if fd.FirstCwndDiffS < 0 {
					fd.FirstCwndDiffS = pt.TimeS
				}
			}
			fd.Points = append(fd.Points, pt)
		}
		rep.Flows = append(rep.Flows, fd)

		who := fmt.Sprintf("flow %d (%s vs %s)", i, fd.CCA[0], fd.CCA[1]) // flows count from 0, as in seeds
		if fd.Done[0] != fd.Done[1] {
			rep.Disagreements = append(rep.Disagreements, fmt.Sprintf("%s: completes on %s only", who, names[map[bool]int{true: 0, false: 1}[fd.Done[0]]]))
		}
		if math.Abs(fd.ThroughputDiff) > opt.ThroughputTol {
			rep.Disagreements = append(rep.Disagreements, fmt.Sprintf("%s: throughput %.3f vs %.3f Mbit/s (%+.1f%%)",
				who, fd.ThroughputMbps[0], fd.ThroughputMbps[1], 100*fd.ThroughputDiff))
		}
		la, lb := float64(fd.LossEvents[0]), float64(fd.LossEvents[1])
		if d := math.Abs(la - lb); d > 2 && d > opt.LossTol*math.Max(la, lb) {
			rep.Disagreements = append(rep.Disagreements, fmt.Sprintf("%s: loss events %d vs %d (recoveries %d/%d, timeouts %d/%d)",
				who, fd.LossEvents[0], fd.LossEvents[1], fd.Recoveries[0], fd.Recoveries[1], fd.Timeouts[0], fd.Timeouts[1]))
		}
		if fd.CwndDiffers > 0 {
			rep.Disagreements = append(rep.Disagreements, fmt.Sprintf("%s: cwnd differs by more than %.0f%% at %d of %d time points, first at %.3f s",
				who, 100*opt.CwndTol, fd.CwndDiffers, len(fd.Points), fd.FirstCwndDiffS))
		}
	}
	return rep, nil
}

// Format writes the report as text.
func (r *DiffReport) Format(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "differential check, seed %d, %d phase(s)\n", r.Seed, len(r.Schedule))
	if r.Aligned {
		b.WriteString("time points count from each flow's first state record\n")
	}
	for _, s := range []DiffSide{r.A, r.B} {
		fmt.Fprintf(&b, "  %-7s %-28s sim %.3f s, wall %.1f ms, %d records, drops %d, losses %d%s\n",
			s.Subject, strings.Join(s.CCAs, ","), s.SimTimeS, s.WallS*1e3, s.Records, s.Drops, s.Losses,
			map[bool]string{true: ", capped", false: ""}[s.Capped])
	}
	for _, f := range r.Flows {
		fmt.Fprintf(&b, "flow %d: %s vs %s\n", f.Flow, f.CCA[0], f.CCA[1])
		fmt.Fprintf(&b, "  throughput %.3f vs %.3f Mbit/s (%+.1f%%), done at %.3f vs %.3f s\n",
			f.ThroughputMbps[0], f.ThroughputMbps[1], 100*f.ThroughputDiff, f.DoneAtS[0], f.DoneAtS[1])
		fmt.Fprintf(&b, "  segments %d vs %d, retransmits %d vs %d, recoveries %d vs %d, timeouts %d vs %d\n",
			f.SegmentsSent[0], f.SegmentsSent[1], f.Retransmits[0], f.Retransmits[1],
			f.Recoveries[0], f.Recoveries[1], f.Timeouts[0], f.Timeouts[1])
		why := ""
		if r.A.Subject == "ns3" || r.B.Subject == "ns3" {
			why = " (ns-3 opens the connection with a handshake)"
		}
		fmt.Fprintf(&b, "  first record at %.3f vs %.3f s%s\n", f.FirstRecordS[0], f.FirstRecordS[1], why)
		fmt.Fprintf(&b, "  %9s %13s %13s %17s %21s\n", "time_s", "cwnd", "ssthresh", "srtt_ms", "ca_state")
		for _, p := range f.Points {
			mark := ""
			if p.Differs {
				mark = "  <"
			}
			fmt.Fprintf(&b, "  %9.3f %6d %6d %6s %6s %8.1f %8.1f %10s %10s%s\n", p.TimeS, p.Cwnd[0], p.Cwnd[1],
				ssStr(p.SSThresh[0]), ssStr(p.SSThresh[1]), p.SRTTms[0], p.SRTTms[1], p.CAState[0], p.CAState[1], mark)
		}
	}
	if r.Agree() {
		b.WriteString("agree within the tolerances\n")
	} else {
		b.WriteString("disagreements:\n")
		for _, d := range r.Disagreements {
			fmt.Fprintf(&b, "  - %s\n", d)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func ssStr(v uint32) string {
	if v >= ccai.InfiniteSSThresh {
		return "inf"
	}
	return fmt.Sprint(v)
}
