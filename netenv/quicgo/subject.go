package quicgo

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"time"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

// DefaultMaxTime caps a run's time (it is wall-clock time here): a
// configuration's longer Limits.MaxTime is cut to it, and the result says
// capped.
const DefaultMaxTime = 2 * time.Minute

// DefaultStallTimeout is how long a run may make no progress (wall clock)
// before Run reports it as a hang.
const DefaultStallTimeout = 30 * time.Second

// maxWall is how long a run may take in wall-clock time by design
// (Capabilities.MaxWall): its time cap, the stall timeout of a run that
// stalls right at the cap, and 30 s to tear down quic-go's endpoints.
const maxWall = DefaultMaxTime + DefaultStallTimeout + 30*time.Second

// Subject is quic-go as a netenv.Subject.
type Subject struct {
	// StallTimeout overrides DefaultStallTimeout when > 0.
	StallTimeout time.Duration
	cert         tls.Certificate
}

var _ netenv.Subject = (*Subject)(nil)

// Open returns the quic subject with a fresh self-signed Ed25519
// certificate for its servers (fixed-size signatures: the handshake's
// datagrams have the same sizes in every run).
func Open() (netenv.Subject, error) {
	cert, err := selfSigned()
	if err != nil {
		return nil, fmt.Errorf("quic subject: certificate: %w", err)
	}
	return &Subject{cert: cert}, nil
}

// Name implements netenv.Subject.
func (*Subject) Name() string { return "quic" }

// baseVars are the base variables the records carry (see the package
// documentation for each one's source).
var baseVars = []string{"cwnd", "srtt", "rttvar", "ca_state", "prev_ca_state", "prior_cwnd", "in_flight", "time", "flow"}

// Capabilities implements netenv.Subject: quic-go's one congestion
// controller (NewReno, "reno"), every parameter the link model applies to
// datagrams but ECN, every topology, not deterministic (real time),
// profiles do not apply; a run takes up to maxWall of wall clock, which
// the campaign's watchdog must allow.
func (*Subject) Capabilities() netenv.Capabilities {
	return netenv.Capabilities{Name: "quic", CCAs: []string{"reno"}, Params: params(),
		Topologies: append([]string(nil), netenv.Topologies...), Base: baseVars, Vars: Vars, MaxWall: maxWall}
}

// params are the parameters of P the subject expresses: all but ECN (our
// PacketConn is not an OOBCapablePacketConn, so quic-go neither sends
// ECT nor reads CE marks).
func params() []string { return netenv.ParamNamesWithoutECN() }

// Check refuses a configuration the subject cannot run (bad input): it is
// Capabilities.CheckConfig plus what no capability names.
func (s *Subject) Check(cfg *netenv.Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := s.Capabilities().CheckConfig(cfg); err != nil {
		return err
	}
	if cfg.DelayHook != nil {
		return fmt.Errorf("quic subject: DelayHook (the symbolic back-end) is not supported")
	}
	if len(cfg.Flows) > 1000 {
		return fmt.Errorf("quic subject: %d flows: at most 1000 (one UDP port each)", len(cfg.Flows))
	}
	return nil
}

// Run implements netenv.Subject under a watchdog: a run that makes no
// progress for the stall timeout returns a *netenv.Fault of kind "hang"
// (its goroutines are abandoned); a panic on the harness goroutine one of
// kind "panic".
func (s *Subject) Run(ctx context.Context, cfg netenv.Config, obs observe.Observer) (netenv.Result, error) {
	if err := s.Check(&cfg); err != nil {
		return netenv.Result{}, err
	}
	if s.cert.PrivateKey == nil {
		cert, err := selfSigned()
		if err != nil {
			return netenv.Result{}, fmt.Errorf("quic subject: certificate: %w", err)
		}
		s.cert = cert
	}
	stall := s.StallTimeout
	if stall <= 0 {
		stall = DefaultStallTimeout
	}
	h := newHarness(&cfg, obs, s.cert)
	return netenv.Watch(ctx, stall, h.progress.Load, func() { h.abandon.Store(true) },
		func() string { return fmt.Sprintf("quic: no progress for %v", stall) }, h.run)
}

// selfSigned makes the servers' certificate.
func selfSigned() (tls.Certificate, error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "actfuzz"},
		DNSNames: []string{"actfuzz"}, NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}, nil
}
