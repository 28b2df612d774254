// Package upstream holds reproducers of the quic subject's findings that
// run quic-go alone (no actfuzz code): quic-go's own simulated network
// (testutils/simnet) inside a testing/synctest bubble, so time is virtual
// and a run takes no wall-clock time (docs/bugs/quicgo-*.md).
package upstream

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/qlog"
	"github.com/quic-go/quic-go/qlogwriter"
	"github.com/quic-go/quic-go/testutils/simnet"
)

// The scenario: 10 ms one-way delay each way, the client writes 1280
// bytes every millisecond (10 Mbit/s), and every datagram the client
// sends between blackoutStart and blackoutEnd is dropped.
const (
	oneWay        = 10 * time.Millisecond
	writeEvery    = time.Millisecond
	writeSize     = 1280
	blackoutStart = 500 * time.Millisecond
	blackoutEnd   = 2500 * time.Millisecond
	runFor        = 4 * time.Second
	// RFC 9002 §7.2 kMinimumWindow: 2 datagrams of 1280 bytes (path MTU
	// discovery off).
	minimumWindow = 2 * 1280
)

// blackhole routes like simnet.PerfectRouter but drops what from sends
// during [blackoutStart, blackoutEnd) after start.
type blackhole struct {
	simnet.PerfectRouter
	from    string
	start   time.Time
	dropped int
}

func (b *blackhole) SendPacket(p simnet.Packet) error {
	if at := time.Since(b.start); p.From.String() == b.from && at >= blackoutStart && at < blackoutEnd {
		b.dropped++
		return nil
	}
	return b.PerfectRouter.SendPacket(p)
}

// sample is the client's state after one qlog metrics_updated event.
type sample struct {
	at         time.Duration
	cwnd, lost int
	srtt, rvar time.Duration
}

// recorder keeps the client's cwnd, RTT estimates and lost-packet count
// from quic-go's qlog events (qlogwriter.Trace and Recorder).
type recorder struct {
	mu      sync.Mutex
	start   time.Time
	cur     sample
	samples []sample
}

func (r *recorder) AddProducer() qlogwriter.Recorder { return r }
func (r *recorder) Close() error                     { return nil }

func (r *recorder) RecordEvent(ev qlogwriter.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch e := ev.(type) {
	case qlog.PacketLost:
		r.cur.lost++
	case qlog.MetricsUpdated:
		if e.CongestionWindow != 0 {
			r.cur.cwnd = e.CongestionWindow
		}
		if e.SmoothedRTT != 0 {
			r.cur.srtt, r.cur.rvar = e.SmoothedRTT, e.RTTVariance
		}
		r.cur.at = time.Since(r.start)
		r.samples = append(r.samples, r.cur)
	}
}

// TestNoPersistentCongestion: RFC 9002 §7.6.2 says that when persistent
// congestion is established (two ack-eliciting packets declared lost, more
// than §7.6.1's duration apart, nothing between them acknowledged) cwnd
// MUST be reduced to kMinimumWindow. A 2 s blackout at a 20 ms RTT is
// about ten times that duration. The test asserts what quic-go v0.65.0
// does, one NewReno reduction (0.7) and no collapse, and fails once
// quic-go establishes persistent congestion.
func TestNoPersistentCongestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cert := selfSigned(t)
		client := &net.UDPAddr{IP: net.ParseIP("10.0.0.1"), Port: 4000}
		server := &net.UDPAddr{IP: net.ParseIP("10.0.0.2"), Port: 443}
		router := &blackhole{from: client.String(), start: time.Now()}
		n := &simnet.Simnet{Router: router}
		link := simnet.NodeBiDiLinkSettings{Latency: oneWay, Downlink: simnet.LinkSettings{MTU: 1500}, Uplink: simnet.LinkSettings{MTU: 1500}}
		cconn, sconn := n.NewEndpoint(client, link), n.NewEndpoint(server, link)
		if err := n.Start(); err != nil {
			t.Fatal(err)
		}
		defer n.Close()

		conf := &quic.Config{DisablePathMTUDiscovery: true, MaxIdleTimeout: time.Minute}
		srvTr := &quic.Transport{Conn: sconn}
		defer srvTr.Close()
		ln, err := srvTr.Listen(&tls.Config{Certificates: []tls.Certificate{cert}, NextProtos: []string{"pc"}}, conf)
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			s, err := c.AcceptStream(context.Background())
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, s)
		}()

		rec := &recorder{start: router.start}
		cconf := conf.Clone()
		cconf.Tracer = func(context.Context, bool, quic.ConnectionID) qlogwriter.Trace { return rec }
		cliTr := &quic.Transport{Conn: cconn}
		defer cliTr.Close()
		ctx, cancel := context.WithTimeout(context.Background(), runFor)
		defer cancel()
		conn, err := cliTr.Dial(ctx, server, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"pc"}}, cconf)
		if err != nil {
			t.Fatal(err)
		}
		str, err := conn.OpenStream()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, writeSize)
		for time.Since(router.start) < runFor {
			if _, err := str.Write(buf); err != nil {
				t.Fatal(err)
			}
			time.Sleep(writeEvery)
		}
		_ = conn.CloseWithError(0, "")
		check(t, rec, router.dropped)
	})
}

// check finds the last sample before the blackout and the first after it
// that declares losses, and compares cwnd there with kMinimumWindow.
func check(t *testing.T, rec *recorder, dropped int) {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var before, after *sample
	for i := range rec.samples {
		s := &rec.samples[i]
		switch {
		case s.at < blackoutStart:
			before = s
		case before != nil && s.at >= blackoutEnd && s.lost > before.lost && after == nil:
			after = s
		}
	}
	if before == nil || after == nil {
		t.Fatalf("no sample before the blackout or none declaring losses after it (%d samples, %d datagrams dropped)", len(rec.samples), dropped)
	}
	// RFC 9002 §7.6.1 with kGranularity 1 ms, max_ack_delay 25 ms (quic-go's
	// default) and kPersistentCongestionThreshold 3.
	pc := (before.srtt + max(4*before.rvar, time.Millisecond) + 25*time.Millisecond) * 3
	t.Logf("before the blackout (t=%v): cwnd %d bytes, srtt %v, rttvar %v: persistent congestion duration %v; blackout %v, %d datagrams dropped",
		before.at, before.cwnd, before.srtt, before.rvar, pc, blackoutEnd-blackoutStart, dropped)
	t.Logf("first ACK declaring losses after it (t=%v): %d packets declared lost, cwnd %d bytes; RFC 9002 §7.6.2 requires %d",
		after.at, after.lost-before.lost, after.cwnd, minimumWindow)
	if blackoutEnd-blackoutStart <= pc {
		t.Fatalf("the blackout does not exceed the persistent congestion duration %v", pc)
	}
	if after.cwnd <= minimumWindow {
		t.Fatalf("cwnd %d bytes: quic-go collapsed to kMinimumWindow: persistent congestion is implemented now; update docs/bugs/quicgo-no-persistent-congestion.md", after.cwnd)
	}
	if 2*after.cwnd < before.cwnd {
		t.Fatalf("cwnd %d bytes after the blackout, below half of the %d before it: not one NewReno reduction (0.7)", after.cwnd, before.cwnd)
	}
}

func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pc"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Unix(1<<33, 0)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, pub, priv)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: priv}
}
