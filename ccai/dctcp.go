package ccai

// DCTCP is Data Center TCP (RFC 8257; Alizadeh et al., SIGCOMM 2010):
// Reno's growth, but on ECN it reduces in proportion to the extent of
// congestion, the EWMA α of the fraction of bytes acknowledged with ECE
// per window (§3.3: α ← (1 − g)·α + g·F, g = 1/16), to cwnd·(1 − α/2)
// (§3.4). It needs the accurate echo of RFC 8257 §3.2, which the
// simulator's receiver gives a DCTCP connection.
//
// Facts from Linux's tcp_dctcp (documented behaviour, not its code): α
// is kept in units of 1/1024 and starts at 1 (dctcp_alpha_on_init); a
// loss halves the window as Reno does (dctcp_react_to_loss, on entering
// Recovery), and an undo restores the window before the reduction.
type DCTCP struct {
	alpha    uint32 // α × 1024
	nextSeq  uint64 // the window's end: α is updated once snd_una passes it
	ackedECN uint64 // bytes acked with ECE in this window
	ackedAll uint64 // bytes acked in this window
	lossCwnd uint32 // cwnd at the last reduction, for undo
}

const (
	dctcpMaxAlpha = 1024
	dctcpShiftG   = 4 // g = 1/16 (RFC 8257 §4.2's recommendation)
)

func init() {
	Register(Info{Name: "dctcp", Description: "Data Center TCP (RFC 8257): ECN-proportional reduction; run it with ecn on", Family: FamilyDCTCP, Beta: 0.5, New: func() Algorithm { return &DCTCP{} }})
}

func (d *DCTCP) Init(s *Sock) {
	d.alpha = dctcpMaxAlpha
	d.nextSeq = s.SndNxt
}

// SSThresh is RFC 8257 §3.4: cwnd × (1 − α/2), at least 2.
func (d *DCTCP) SSThresh(s *Sock) uint32 {
	d.lossCwnd = s.Cwnd
	return max(s.Cwnd-uint32(uint64(s.Cwnd)*uint64(d.alpha)>>11), 2)
}

func (d *DCTCP) CongAvoid(s *Sock, acked uint32) { RenoCongAvoid(s, acked) }

// SetState halves the window on entering Recovery: a loss is not an ECN
// mark, and RFC 8257 §3.5 asks for the standard response to it.
func (d *DCTCP) SetState(s *Sock, st CAState) {
	if st == StateRecovery && s.CAState != StateRecovery {
		d.lossCwnd = s.Cwnd
		s.SSThresh = max(s.Cwnd>>1, 2)
	}
}

func (d *DCTCP) CwndEvent(*Sock, Event) {}

func (d *DCTCP) UndoCwnd(s *Sock) uint32 { return max(s.Cwnd, d.lossCwnd) }

// InAckEvent accumulates acknowledged bytes, with ECE or not, and updates
// α once per window of data (RFC 8257 §3.3).
func (d *DCTCP) InAckEvent(s *Sock, flags AckFlags, ackedBytes uint32) {
	d.ackedAll += uint64(ackedBytes)
	if flags&AckECE != 0 {
		d.ackedECN += uint64(ackedBytes)
	}
	if s.SndUna < d.nextSeq || d.ackedAll == 0 {
		return
	}
	// α ← α − α·g + g·F, with F = ackedECN / ackedAll in 1/1024 units.
	gF := (d.ackedECN << (10 - dctcpShiftG)) / d.ackedAll
	d.alpha = uint32(min(uint64(d.alpha)-uint64(d.alpha>>dctcpShiftG)+gF, dctcpMaxAlpha))
	d.nextSeq = s.SndNxt
	d.ackedECN, d.ackedAll = 0, 0
}

var dctcpVars = []VarDesc{
	{Name: "alpha", Doc: "DCTCP's α, the EWMA of the fraction of bytes marked CE per window (0–1)"},
}

func (d *DCTCP) Vars() []VarDesc { return dctcpVars }

func (d *DCTCP) ReadVars(_ *Sock, dst []float64) { dst[0] = float64(d.alpha) / dctcpMaxAlpha }
