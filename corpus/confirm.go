package corpus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/tcp"
)

// FirstHit runs the seed's configuration cfg once on subj and reports the
// first hit of specs (false: none held). It is one run of `actfuzz
// confirm` and of triage's replays on a subject that is not
// deterministic (the kernel). extra, if not nil, also sees every state
// record; the run's summary is returned with the hit.
func FirstHit(ctx context.Context, subj netenv.Subject, seed *Seed, cfg netenv.Config, specs []ConditionSpec, extra tcp.Observer) (time.Duration, bool, netenv.Result, error) {
	w, err := NewWatcherFor(subj.Capabilities(), seed.CCAI, specs)
	if err != nil {
		return 0, false, netenv.Result{}, err
	}
	w.Start(cfg.Schedule)
	at := time.Duration(-1)
	w.OnHit = func(_ int, _ *Condition, _ []float64, t time.Duration) {
		if at < 0 {
			at = t
		}
	}
	var obs tcp.Observer = w
	if extra != nil {
		obs = tee{w, extra}
	}
	res, err := subj.Run(ctx, cfg, obs)
	var fault *netenv.Fault
	if errors.As(err, &fault) {
		return 0, false, res, fmt.Errorf("subject fault: %w", err)
	}
	if err != nil {
		return 0, false, res, err
	}
	if w.Err != nil {
		return 0, false, res, w.Err
	}
	return at, at >= 0, res, nil
}

// ProvidedVars refuses conditions on state variables the subject does not
// provide (netenv.Capabilities): on the kernel, a native CCAI's own
// variables (cubic's target, …) would be silent zeros.
func ProvidedVars(subj netenv.Subject, ccas []string, specs []ConditionSpec) error {
	caps := subj.Capabilities()
	for _, cca := range ccas {
		sc := SchemaOf(caps, cca)
		if _, err := Compile(specs, sc); err != nil {
			return fmt.Errorf("the %s subject does not provide a variable of this condition (it provides %s): %w", subj.Name(), strings.Join(sc.Names(), ", "), err)
		}
	}
	return nil
}
