package act

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
)

// A verifier makes a finding a finding only if it replays. Results that
// an Executor brings from elsewhere (act/cluster's worker hosts) are
// whatever a publisher on the results stream wrote: NATS permissions keep
// strangers off it, but a host with a bad build, or anyone holding a
// host's credentials, can publish a well-formed result with a made-up
// hit. So before a batch is merged, every result that would open a new
// finding group is run again here, by the same Runner a worker uses, and
// a result whose hits or fault differ from that run's is replaced by it
// (states, hits, fault and all), counted (Report.Unreproduced) and
// logged. What a forger can still do is in docs/cluster.md: waste
// simulations, skew coverage with invented states, add
// hits to groups that exist, hide findings of the configurations it runs.
//
// A hang, oom or crash cannot be run here without hanging or killing the
// coordinator: it is replayed in a worker process under the watchdog
// (ReplayIsolated), and one that does not recur there is rejected (a
// host's hang that a quieter machine does not see again is lost with it).
// Subjects that are not deterministic (linux) cannot be checked by a
// replay; `run --nats` refuses them.
type verifier struct {
	c      *Campaign
	rep    *Report
	runner *Runner
	space  coverage.Space
	iso    IsolateOptions
	log    *slog.Logger
}

// newVerifier returns the verifier of a campaign whose results come from
// an Executor, nil for one that runs its simulations itself.
func newVerifier(c *Campaign, rep *Report, opt Options, space coverage.Space, log *slog.Logger) (*verifier, error) {
	if opt.Executor == nil || !opt.Subject.Capabilities().Deterministic {
		return nil, nil
	}
	r, err := NewRunner(c, opt.Subject, space)
	if err != nil {
		return nil, err
	}
	return &verifier{c: c, rep: rep, runner: r, space: space, iso: opt.IsolateOptions, log: log}, nil
}

// batch checks the results base … base+n-1 (configurations pending[i-base])
// in merge order, before they are merged, and replaces in arrived those
// whose findings do not reproduce.
func (v *verifier) batch(ctx context.Context, arrived map[int]result, base, n int, pending []Config, groups map[string]*FindingGroup) error {
	seen := map[string]bool{} // groups that earlier results of the batch open
	isNew := func(key string) bool { return groups[key] == nil && !seen[key] }
	for i := base; i < base+n; i++ {
		r := arrived[i]
		opens := r.fault != nil && isNew(faultKey(v.c, v.runner.Subject().Name(), r.fault))
		for _, h := range r.hits {
			opens = opens || isNew(hitKey(v.c, v.runner.Subject().Name(), h))
		}
		if opens {
			own, err := v.check(ctx, r, pending[i-base])
			if err != nil {
				return err
			}
			if own != nil {
				v.rep.Unreproduced++
				v.log.Warn("result rejected: its finding does not reproduce on the coordinator; the coordinator's own run of the configuration replaces it",
					"config", i, "result", outcomeString(r.hits, r.fault), "coordinator", outcomeString(own.hits, own.fault))
				arrived[i] = *own
				r = *own
			}
		}
		if r.fault != nil {
			seen[faultKey(v.c, v.runner.Subject().Name(), r.fault)] = true
		}
		for _, h := range r.hits {
			seen[hitKey(v.c, v.runner.Subject().Name(), h)] = true
		}
	}
	return nil
}

// check runs r's configuration g here; it returns nil when r's hits and
// fault are those of the run, else the run's result to merge instead.
func (v *verifier) check(ctx context.Context, r result, g Config) (*result, error) {
	if r.fault != nil && corpus.ProcessFault(r.fault.Kind) {
		s := v.rep.seedOf(v.c, g)
		s.Finding = r.fault
		f, err := ReplayIsolated(ctx, s, v.iso)
		if err != nil {
			return nil, fmt.Errorf("checking the %s fault of configuration %d: %w", r.fault.Kind, r.idx, err)
		}
		if f != nil && f.Kind == r.fault.Kind {
			return nil, nil
		}
		if f != nil && corpus.ProcessFault(f.Kind) {
			// Another process fault: the worker's verdict, with no
			// states (a worker that dies sends none).
			b, _ := coverage.NewBatch(v.space) // validated with the store
			return &result{idx: r.idx, batch: b, fault: f}, nil
		}
		// It ran to its end in a worker: it can run here.
	}
	b, _ := coverage.NewBatch(v.space) // validated with the store
	o := v.runner.Run(ctx, g, b)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if o.Err != nil && o.Fault == nil {
		o.Fault = &corpus.Finding{Kind: "refused", Detail: o.Err.Error()}
	}
	own := result{idx: r.idx, batch: b, mean: o.Mean, best: o.Best, bestAt: o.BestAt, hits: o.Hits, fault: o.Fault, capped: o.Capped, events: o.Result.Events}
	if sameFindings(r, own) {
		return nil, nil
	}
	return &own, nil
}

// sameFindings says whether two results of one configuration report the
// same hits (condition, flow, time and state) and the same fault.
func sameFindings(a, b result) bool {
	if len(a.hits) != len(b.hits) || (a.fault == nil) != (b.fault == nil) {
		return false
	}
	if a.fault != nil && (a.fault.Kind != b.fault.Kind || a.fault.Condition != b.fault.Condition || a.fault.TimeNS != b.fault.TimeNS) {
		return false
	}
	byName := func(h Hit) string { return h.Condition }
	ah, bh := slices.Clone(a.hits), slices.Clone(b.hits)
	slices.SortFunc(ah, func(x, y Hit) int { return cmp.Compare(byName(x), byName(y)) })
	slices.SortFunc(bh, func(x, y Hit) int { return cmp.Compare(byName(x), byName(y)) })
	for i := range ah {
		x, y := ah[i], bh[i]
		if x.Condition != y.Condition || x.Flow != y.Flow || x.TimeNS != y.TimeNS || len(x.State) != len(y.State) {
			return false
		}
		for k, xv := range x.State {
			if yv, ok := y.State[k]; !ok || fmt.Sprint(xv) != fmt.Sprint(yv) {
				return false
			}
		}
	}
	return true
}

// outcomeString says in a few words what a result found, for the log.
func outcomeString(hits []Hit, f *corpus.Finding) string {
	var names []string
	for _, h := range hits {
		names = append(names, fmt.Sprintf("%.60q at %d ns", h.Condition, h.TimeNS))
	}
	if f != nil {
		names = append(names, fmt.Sprintf("fault %.40q", f.Kind))
	}
	if len(names) == 0 {
		return "no finding"
	}
	return fmt.Sprint(names)
}
