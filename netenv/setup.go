package netenv

import "github.com/actfuzz/actfuzz/ccai"

// Setup is the fixed part of a test input, what every run of a campaign
// shares and what a seed records beside its own seed e and schedule: the
// flows' congestion controls (L, one entry per flow), the topology (T),
// the behaviour profile, the bytes each flow sends, SACK and the
// handshake. A campaign holds one; Config makes a run of it.
type Setup struct {
	CCAI      []string     // one entry per flow
	Topology  string       // TopoSingleLink (default), TopoDumbbell or TopoParkingLot
	Profile   ccai.Profile //
	Bytes     uint64       // per flow
	SACK      bool         //
	Handshake bool         // open connections with SYN/SYN-ACK (native subject)
	// LinkTraces are the user's trace files, link_trace user1 … user4
	// (at most MaxLinkTraceFiles), loaded (LoadLinkTraces).
	LinkTraces []*LinkTraceFile
}

// Config is the run of s with seed e and schedule sched.
func (s *Setup) Config(seed uint64, sched Schedule) Config {
	cfg := Config{Seed: seed, Schedule: sched, Topology: s.Topology, SACK: s.SACK, Profile: s.Profile, Handshake: s.Handshake,
		Flows: make([]Flow, len(s.CCAI)), LinkTraces: s.LinkTraces}
	for i, name := range s.CCAI {
		cfg.Flows[i] = Flow{CCA: name, Bytes: s.Bytes}
	}
	return cfg
}
