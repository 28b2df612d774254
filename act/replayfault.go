package act

import (
	"context"
	"fmt"

	"github.com/actfuzz/actfuzz/corpus"
)

// ReplayIsolated runs a seed's configuration once in a worker process under
// the watchdog and memory limit of opt (default watchdog: 60 s, or
// opt.RunWall + 60 s for a subject whose runs take longer), so that
// it cannot hang or take down the caller. It returns the fault observed —
// a process fault (hang, oom, crash) or one of the subject's (panic, …) —
// or nil when the run ended cleanly. The worker rebuilds the seed's
// campaign (CCAI, profile, topology, transfer) from a header like any
// other.
func ReplayIsolated(ctx context.Context, s *corpus.Seed, opt IsolateOptions) (*corpus.Finding, error) {
	if s.Witness != nil {
		return nil, fmt.Errorf("a witness seed replays on the symbolic back-end, not in a worker")
	}
	src := seedCampaign(s)
	// The worker checks the campaign against the seed's subject, which
	// it opens (a seed of ns-3 names TcpCubic).
	c, err := parseCampaign("seed", src, s.LinkTraces)
	if err != nil {
		return nil, fmt.Errorf("seed as a campaign: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	subject := s.Subject
	if subject == "" {
		subject = "native"
	}
	e := startIsolated(ctx, c.Header(subject), c.Space, opt, 1, nil, false)
	defer e.close()
	e.dispatch(0, []Config{{Seed: s.Seed, Schedule: s.Schedule}})
	select {
	case r := <-e.results():
		return r.fault, nil
	case err := <-e.failed():
		return nil, err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// seedCampaign is the campaign file of a seed's run settings.
func seedCampaign(s *corpus.Seed) []byte {
	b := fmt.Appendf(nil, "ccai: [")
	for i, c := range s.CCAI {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = fmt.Appendf(b, "%q", c)
	}
	b = append(b, "]\n"...)
	if s.Topology != "" {
		b = fmt.Appendf(b, "topology: %q\n", s.Topology)
	}
	if s.Profile != "" {
		b = fmt.Appendf(b, "profile: %q\n", s.Profile)
	}
	if s.Bytes > 0 {
		b = fmt.Appendf(b, "bytes: %d\n", s.Bytes)
	}
	if len(s.LinkTraces) > 0 {
		// The names only: the content travels in the header.
		b = append(b, "link_traces: ["...)
		for i, f := range s.LinkTraces {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = fmt.Appendf(b, "%q", f.Name)
		}
		b = append(b, "]\n"...)
	}
	// S matters nothing to a fault's replay, and the default S reads
	// ssthresh, which not every subject reports (quic): cwnd, which every
	// subject does, is the whole of it.
	b = append(b, "state:\n  cwnd: {min: 1, max: 1024, step: 1}\n"...)
	return fmt.Appendf(b, "sack: %v\nhandshake: %v\n", s.SACK, s.Handshake)
}
