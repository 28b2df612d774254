package tcp

import (
	"time"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/netenv/sim"
)

// Defaults modelled on Linux.
const (
	DefaultMSS = 1448 // 1500-byte MTU less IPv4, TCP and timestamp option
	// DefaultInitCwnd is RFC 6928's initial window of 10 segments.
	DefaultInitCwnd = 10
	// dupThresh is RFC 5681's DupThresh (Linux's tcp_reordering default).
	dupThresh = 3
	// maxCwnd clamps the window (Linux's snd_cwnd_clamp default).
	maxCwnd = 0xffffffff
)

// Output takes packets leaving an endpoint.
type Output interface {
	Send(p *sim.Packet)
}

// SenderConfig configures a bulk-transfer sender.
type SenderConfig struct {
	Flow      int32
	Node      sim.NodeID
	Peer      sim.NodeID
	Bytes     uint64 // transfer size
	MSS       uint32 // 0: DefaultMSS
	InitCwnd  uint32 // 0: DefaultInitCwnd
	SACK      bool
	Profile   ccai.Profile
	AppRate   uint64 // application rate in bit/s; 0 means unlimited
	SndBuf    uint64 // send buffer in bytes (app.go); 0: DefaultSndBuf
	Algorithm ccai.Algorithm
	Observer  Observer // may be nil
	Out       Output
	// OnDone is called once all data is acknowledged. Snapshots
	// (netenv/snapshot) share it: it captures the run, which they save.
	OnDone func() `snapshot:"shared"`
	// Handshake opens the connection with SYN and SYN-ACK first
	// (handshake.go); otherwise the transfer starts at once.
	Handshake bool
	// ECN: the connection negotiated ECN (ecn.go): new data is ECT, and
	// an ACK with ECE starts a reduction (CWR).
	ECN bool
	// NoIdleRestart is Linux's net.ipv4.tcp_slow_start_after_idle=0: no
	// cwnd restart after an idle period (tcp_cwnd_restart is skipped;
	// the algorithm still sees CA_EVENT_TX_START).
	NoIdleRestart bool
}

// Stats are a sender's counters.
type Stats struct {
	SegmentsSent   uint64
	Retransmits    uint64
	Timeouts       uint64
	Recoveries     uint64
	Undos          uint64
	ECNReductions  uint64 // CWR episodes started by ECE
	DeliveredBytes uint64
	Done           bool
	DoneAt         time.Duration
	SynRetransmits uint64
	ConnectFailed  bool // the handshake gave up after SynRetries
}

// Timer tags of the sender.
const (
	timerRTO uint8 = iota
	timerSend
)

// Sender is a TCP bulk sender.
type Sender struct {
	cfg  SenderConfig
	sim  *sim.Sim
	ca   ccai.Algorithm
	cc   ccai.CongController
	pa   ccai.PktsAcker
	iae  ccai.InAckEventer
	vexp ccai.VarExporter
	sock ccai.Sock

	q      queue
	sndUna uint64
	sndNxt uint64
	// cwrPending: the next new segment carries CWR (ecn.go).
	cwrPending bool

	rtt     rttEstimator
	track   RTTTracker   // nil but under the symbolic back-end
	clock   ClockTracker // nil but under the symbolic back-end (abstime.go)
	rate    RateTracker  // nil but under the symbolic back-end (abstime.go)
	backoff uint32
	rtoEv   *sim.Event
	sendEv  *sim.Event

	// Application (app.go): bytes written = appBase + rate·(now −
	// appSince), at most sndUna + SndBuf; appBlocked: the application is
	// blocked on a full send buffer.
	appRate    uint64
	appBase    uint64
	appSince   time.Duration
	appBlocked bool

	// Loss recovery (RFC 6675 RecoveryPoint, Linux's high_seq and undo).
	highSeq      uint64
	undoValid    bool
	undoMarker   uint64
	undoRetrans  int32
	retransStamp time.Duration // first retransmission of the episode; 0: none
	prrDelivered uint32
	prrOut       uint32
	lostHint     int // no lost-and-not-retransmitted segment before this index
	// lostMark is the packet number below which RFC 6675 loss marking
	// is done (markLost); see queue for packet numbers.
	lostMark uint64
	// lost counts every marking of a segment lost (Linux's tp->lost,
	// bumped by tcp_mark_skb_lost); an ACK's rate sample reports the
	// increase during that ACK (tcp_rate_gen's rs->losses).
	lost          uint64
	renoLimbo     bool
	frto          bool // F-RTO (RFC 5682) is judging the current timeout
	frtoNewData   bool // F-RTO step 2.b: send new data before retransmissions
	nextPace      time.Duration
	firstSent     time.Duration // send time of the flight's first packet (rate sampling)
	appLimitedTil uint64        // delivered count below which samples are app-limited

	// Congestion window validation (RFC 7661).
	cwndUsageSeq uint64
	cwndUsed     uint32
	cwndStamp    time.Duration

	// Handshake (handshake.go).
	connecting bool
	synRetries uint32
	synSentAt  time.Duration // the first SYN's; its TSVal is synSentAt+1

	stats Stats
	ack   ackInfo
	rec   StateRecord
	vars  []float64
	// records counts the records emitted; varsNow is scratch for
	// changedSinceRecord.
	records uint64
	varsNow []float64
	// inRTO: a timeout is being handled; its transition to Loss is
	// recorded by its one ReasonRTO record.
	inRTO bool
}

// NewSender creates a sender; Start begins the transfer.
func NewSender(s *sim.Sim, cfg SenderConfig) *Sender {
	if cfg.MSS == 0 {
		cfg.MSS = DefaultMSS
	}
	if cfg.InitCwnd == 0 {
		cfg.InitCwnd = DefaultInitCwnd
	}
	if cfg.SndBuf == 0 {
		cfg.SndBuf = DefaultSndBuf
	}
	snd := &Sender{cfg: cfg, sim: s, ca: cfg.Algorithm, appRate: cfg.AppRate}
	snd.cc, _ = cfg.Algorithm.(ccai.CongController)
	snd.pa, _ = cfg.Algorithm.(ccai.PktsAcker)
	snd.iae, _ = cfg.Algorithm.(ccai.InAckEventer)
	snd.vexp, _ = cfg.Algorithm.(ccai.VarExporter)
	if snd.vexp != nil {
		snd.vars = make([]float64, len(snd.vexp.Vars()))
		snd.varsNow = make([]float64, len(snd.vars))
	}
	snd.track, _ = s.Scheduler().(RTTTracker)
	snd.clock, _ = s.Scheduler().(ClockTracker)
	snd.rate, _ = s.Scheduler().(RateTracker)
	snd.rtoEv = sim.NewEvent(cfg.Node, sim.KindTimer, timerRTO, snd)
	snd.sendEv = sim.NewEvent(cfg.Node, sim.KindTimer, timerSend, snd)
	snd.sock = ccai.Sock{
		Cwnd:      cfg.InitCwnd,
		CwndClamp: maxCwnd,
		SSThresh:  ccai.InfiniteSSThresh,
		MSS:       cfg.MSS,
		Profile:   cfg.Profile,
	}
	snd.rec.Flow = cfg.Flow
	snd.rec.Vars = snd.vars
	return snd
}

// Sock exposes the congestion-control state (read-only use).
func (s *Sender) Sock() *ccai.Sock { return &s.sock }

// Stats returns the counters.
func (s *Sender) Stats() Stats { return s.stats }

// RTO is the current retransmission timeout including backoff.
func (s *Sender) RTO() time.Duration {
	return min(s.rtt.rto()<<min(s.backoff, 16), MaxRTO)
}

// Start opens the connection (with Handshake) or initializes the
// algorithm and sends the first window.
func (s *Sender) Start() {
	if s.cfg.Handshake {
		s.connecting = true
		s.sendSYN()
		return
	}
	s.establish()
}

// Handle runs the sender's timers and receives ACKs.
func (s *Sender) Handle(e *sim.Event) {
	s.sock.Now = s.sim.Now()
	switch {
	case e.Kind == sim.KindPacket:
		p := e.Pkt
		switch {
		case s.connecting:
			s.onSynAck(p)
		case !p.SYN: // a late SYN-ACK duplicate is not an ACK of data
			s.onAck(p)
		}
		s.sim.FreePacket(p)
	case e.Tag == timerRTO && s.connecting:
		s.onSynTimeout()
	case e.Tag == timerRTO:
		s.onRTO()
	case e.Tag == timerSend:
		s.output()
	}
}

// output sends as much as the window, pacing and the application allow
// (Linux's tcp_write_xmit and tcp_xmit_retransmit_queue).
func (s *Sender) output() {
	if s.stats.Done {
		return
	}
	now := s.sim.Now()
	// sent is tcp_write_xmit's sent_pkts: new data sent by this call.
	// Linux validates the window at its end only when it sent something
	// or found the window full (commit 299bcb55ecd1, 5.11); a call that
	// finds nothing to send leaves the window's record alone.
	sent := false
	for {
		inFlight := s.sock.InFlight()
		if inFlight >= s.sock.Cwnd {
			s.validateCwnd(true)
			return
		}
		if s.sock.PacingRate > 0 && s.paceWait(now) {
			if sent {
				s.validateCwnd(false)
			}
			return
		}
		if !s.frtoNewData {
			if i := s.nextLost(); i >= 0 {
				s.retransmit(i)
				continue
			}
		}
		written := s.appWrite(now)
		s.noteAppChecks(written)
		avail := written - s.sndNxt
		if s.sndNxt >= written {
			avail = 0
		}
		size := uint32(min(avail, uint64(s.cfg.MSS)))
		tail := written == s.cfg.Bytes
		if size == 0 || (size < s.cfg.MSS && !tail && s.sock.PacketsOut > 0) {
			// Application-limited (or Nagle, RFC 896, holding a
			// runt while data is in flight).
			s.markAppLimited()
			if sent {
				s.validateCwnd(false)
			}
			// A rate-limited application that is not blocked on the
			// send buffer writes the next segment at appTimeFor; a
			// blocked one writes when an ACK frees the buffer.
			if written < s.cfg.Bytes && s.appRate > 0 && !s.appBlocked {
				next := min(s.sndNxt+uint64(s.cfg.MSS), s.cfg.Bytes)
				s.scheduleAppWrite(s.appTimeFor(next))
			}
			return
		}
		if size < s.cfg.MSS && !tail {
			s.noteAppCut()
		}
		s.sendNew(size)
		sent = true
	}
}

// nextLost finds a segment marked lost and not yet retransmitted.
func (s *Sender) nextLost() int {
	// Every lost segment may already be retransmitted: retrans_out bounds
	// how many of the lost ones are.
	if s.sock.LostOut == 0 || s.sock.LostOut <= s.sock.RetransOut {
		return -1
	}
	for i := s.lostHint; i < s.q.len(); i++ {
		seg := s.q.at(i)
		if seg.flags&(segLost|segRetrans|segSacked) == segLost {
			s.lostHint = i
			return i
		}
	}
	s.lostHint = s.q.len()
	return -1
}

func (s *Sender) beforeTransmit(now time.Duration) {
	if s.sock.PacketsOut == 0 {
		// Restart after idle (RFC 5681 §4.1, Linux's tcp_cwnd_restart).
		if idle := now - s.sock.LastSend; s.sock.LastSend > 0 && idle > s.RTO() && s.cc == nil && !s.cfg.NoIdleRestart {
			s.cwndRestart(idle)
		}
		s.ca.CwndEvent(&s.sock, ccai.EventTxStart)
		// Delivery-rate sampling starts a new flight.
		s.sock.DeliveredTime = now
		s.firstSent = now
	}
}

// cwndRestart shrinks cwnd after idle: halve once per RTO idle, not below
// the restart window min(IW, cwnd) (RFC 2861 §3, RFC 5681 §4.1).
func (s *Sender) cwndRestart(idle time.Duration) {
	restart := min(s.cfg.InitCwnd, s.sock.Cwnd)
	s.sock.SSThresh = s.currentSSThresh()
	rto := s.RTO()
	for idle > rto && s.sock.Cwnd > restart {
		s.sock.Cwnd >>= 1
		idle -= rto
	}
	s.sock.Cwnd = max(s.sock.Cwnd, restart)
	s.sock.CwndCnt = 0
	s.ca.CwndEvent(&s.sock, ccai.EventCwndRestart)
	s.emit(ReasonIdle)
}

func (s *Sender) sendNew(size uint32) {
	now := s.sim.Now()
	s.beforeTransmit(now)
	seg := segment{seq: s.sndNxt, len: size, sentAt: now}
	s.stampRate(&seg)
	s.q.push(seg)
	s.sndNxt += uint64(size)
	s.sock.SndNxt = s.sndNxt
	s.sock.PacketsOut++
	if st := s.sock.CAState; st == ccai.StateRecovery || st == ccai.StateCWR {
		s.prrOut++ // PRR counts what a reduction sends (RFC 6937 §3)
	}
	s.transmit(&seg, false)
}

func (s *Sender) retransmit(i int) {
	now := s.sim.Now()
	seg := s.q.at(i)
	s.beforeTransmit(now)
	seg.flags |= segRetrans | segEverRetx
	seg.sentAt = now
	s.stampRate(seg)
	s.sock.RetransOut++
	s.stats.Retransmits++
	if s.retransStamp == 0 {
		s.retransStamp = now + 1
	}
	if s.undoRetrans < 0 {
		s.undoRetrans = 0
	}
	s.undoRetrans++
	if st := s.sock.CAState; st == ccai.StateRecovery || st == ccai.StateCWR {
		s.prrOut++ // PRR counts what a reduction sends (RFC 6937 §3)
	}
	s.transmit(seg, true)
}

// transmit puts a segment on the wire.
func (s *Sender) transmit(seg *segment, retx bool) {
	now := s.sim.Now()
	p := s.sim.NewPacket()
	p.Flow = s.cfg.Flow
	p.Src, p.Dst = s.cfg.Node, s.cfg.Peer
	p.Seq, p.Len = seg.seq, seg.len
	p.FIN = seg.end() == s.cfg.Bytes
	p.TSVal = now + 1 // never 0, so that 0 means "no echo"
	p.Retx = retx
	p.SentAt = now
	s.ecnMark(p, retx)
	s.sock.LastSend = now
	s.stats.SegmentsSent++
	if s.sock.PacingRate > 0 {
		gap := time.Duration(uint64(p.WireBytes()) * uint64(time.Second) / s.sock.PacingRate)
		s.advancePace(now, gap)
	}
	if !s.rtoEv.Queued() {
		s.armRTO()
	}
	s.cfg.Out.Send(p)
}

// currentSSThresh is Linux's tcp_current_ssthresh: outside a reduction,
// the larger of ssthresh and ¾·cwnd, remembering where the window was.
func (s *Sender) currentSSThresh() uint32 {
	if st := s.sock.CAState; st == ccai.StateCWR || st == ccai.StateRecovery {
		return s.sock.SSThresh
	}
	return max(s.sock.SSThresh, s.sock.Cwnd>>1+s.sock.Cwnd>>2)
}

// validateCwnd tracks whether the window limits sending (Linux's
// tcp_cwnd_validate, RFC 7661) and, after an RTO of application-limited
// sending, decays cwnd toward what was used (RFC 2861 §3.2,
// tcp_cwnd_application_limited). The decay is recorded (ReasonIdle): it
// happens while sending, after an ACK's record or on no ACK at all, and
// without a record of its own the next ACK's record would show the
// window's growth from the undecayed one (a decayed window below
// 2·max_packets_out is cwnd-limited in slow start, which Hybla's one
// increment of 2^ρ − 1 per ACK takes to ssthresh).
func (s *Sender) validateCwnd(cwndLimited bool) {
	now := s.sim.Now()
	// The strongest signal of how fully the window is used, per window
	// (from snd_nxt at its start until snd_una passes it): that the
	// sender was cwnd-limited in it, which a cwnd-limited call renews
	// (the window then starts again at snd_nxt); else the largest
	// packets_out seen in it (tcp_cwnd_validate since commit
	// f4ce91ce12a7, 6.1: before it a larger packets_out could clear
	// is_cwnd_limited).
	if s.sndUna >= s.cwndUsageSeq || cwndLimited || (!s.sock.CwndLimited && s.sock.PacketsOut > s.sock.MaxPacketsOut) {
		s.sock.CwndLimited = cwndLimited
		s.sock.MaxPacketsOut = s.sock.PacketsOut
		s.cwndUsageSeq = s.sndNxt
	}
	if s.sock.IsCwndLimited() {
		s.cwndUsed = 0
		s.cwndStamp = now
		return
	}
	s.cwndUsed = max(s.cwndUsed, s.sock.PacketsOut)
	if s.cc == nil && now-s.cwndStamp >= s.RTO() {
		// tcp_cwnd_application_limited: in Open, and not when the
		// application is blocked on the send buffer (SOCK_NOSPACE),
		// halve the way to what was used; in any state, start the
		// next RTO.
		if s.sock.CAState == ccai.StateOpen && !s.appBlocked {
			used := max(s.cwndUsed, s.cfg.InitCwnd)
			if used < s.sock.Cwnd {
				s.sock.SSThresh = s.currentSSThresh()
				s.sock.Cwnd = (s.sock.Cwnd + used) >> 1
				s.emit(ReasonIdle)
			}
			s.cwndUsed = 0
		}
		s.cwndStamp = now
	}
}

// markAppLimited records that the flight is application-limited, so that
// rate samples taken from it are flagged (delivery-rate draft §3.4).
func (s *Sender) markAppLimited() {
	if s.sock.InFlight() < s.sock.Cwnd && s.sock.LostOut <= s.sock.RetransOut {
		s.appLimitedTil = max(s.sock.Delivered+uint64(s.sock.InFlight()), 1)
		s.sock.AppLimited = true
	}
}
