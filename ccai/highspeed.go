package ccai

// hstcpAIMD is the table of RFC 3649 Appendix B: entry i holds the largest
// window w_i (packets) it applies to and b(w_i) in units of 1/256. A window
// in (w_{i-1}, w_i] grows by a(w) = i+1 packets per RTT and is cut by b(w_i)
// on loss; windows up to Low_Window = 38 behave as standard TCP (a = 1,
// b = 0.5). The windows are those where the response function of RFC 3649 §5,
// p(w) = 0.078/w^1.2, gives a(w) = w²·p(w)·2·b(w)/(2−b(w)) the next integer,
// and b(w) = (High_Decrease − 0.5)·(log w − log Low_Window)/(log High_Window −
// log Low_Window) + 0.5 with High_Window = 83000 and High_Decrease = 0.1
// (RFC 3649 §5), truncated to 1/256 as in Linux. The table is a constant, so no floating point or logarithm
// ever reaches cwnd; the unit tests recompute it from the RFC's formulas.
var hstcpAIMD = [...]struct {
	cwnd uint32
	md   uint32 // b(w)·256
}{
	{38, 128}, {118, 112}, {221, 104}, {347, 98}, {495, 93},
	{663, 89}, {851, 86}, {1058, 83}, {1284, 81}, {1529, 78},
	{1793, 76}, {2076, 74}, {2378, 72}, {2699, 71}, {3039, 69},
	{3399, 68}, {3778, 66}, {4177, 65}, {4596, 64}, {5036, 62},
	{5497, 61}, {5979, 60}, {6483, 59}, {7009, 58}, {7558, 57},
	{8130, 56}, {8726, 55}, {9346, 54}, {9991, 53}, {10661, 52},
	{11358, 52}, {12082, 51}, {12834, 50}, {13614, 49}, {14424, 48},
	{15265, 48}, {16137, 47}, {17042, 46}, {17981, 45}, {18955, 45},
	{19965, 44}, {21013, 43}, {22101, 43}, {23230, 42}, {24402, 41},
	{25618, 41}, {26881, 40}, {28193, 39}, {29557, 39}, {30975, 38},
	{32450, 38}, {33986, 37}, {35586, 36}, {37253, 36}, {38992, 35},
	{40808, 35}, {42707, 34}, {44694, 33}, {46776, 33}, {48961, 32},
	{51258, 32}, {53677, 31}, {56230, 30}, {58932, 30}, {61799, 29},
	{64851, 28}, {68113, 28}, {71617, 27}, {75401, 26}, {79517, 26},
	{84035, 25}, {89053, 24},
}

// hstcpMaxClamp keeps cwnd·(ai+1) and cwnd·md well inside uint32, as Linux
// limits snd_cwnd_clamp to 0xffffffff/128 for HighSpeed.
const hstcpMaxClamp = 0xffffffff / 128

// HighSpeed is HighSpeed TCP (RFC 3649): above Low_Window = 38 packets the
// additive increase a(w) grows and the multiplicative decrease b(w) shrinks
// with the window, following the RFC's Appendix B table.
//
// As in Linux, the table index (ai) moves at most as far as the current
// window on each congestion-avoidance ACK, the increase is ai+1 packets per
// window of ACKs (one step of snd_cwnd_cnt per ACK, whatever it covers), and
// ssthresh uses the index reached at the last increase.
//
// Profile differences:
//   - Undo: ProfileLinux310 has no undo of its own and gets the kernel's
//     fallback max(cwnd, 2·ssthresh), which after a HighSpeed reduction of
//     less than half doubles the window instead of restoring it (ACT paper
//     §4.5, fixed by commit 85f7e7508a1d "tcp: add cwnd_undo functions to
//     various tcp cc algorithms", 4.10, then restored through prior_cwnd by
//     "tcp: consolidate congestion control undo functions", 4.14). Both
//     come from [RenoUndoCwnd].
//   - Slow start and the cwnd-limited test are the profile-aware
//     [Sock.SlowStart] and [Sock.IsCwndLimited]. Like the kernel in both
//     profiles, HighSpeed drops the slow-start leftover and steps
//     snd_cwnd_cnt once per ACK.
type HighSpeed struct {
	ai uint32 // index into hstcpAIMD
}

func init() {
	Register(Info{Name: "highspeed", Description: "HighSpeed TCP (RFC 3649), a(w)/b(w) from the RFC's table", Family: FamilyLossBased, Beta: 0.5, New: func() Algorithm { return &HighSpeed{} }})
}

func (h *HighSpeed) Init(s *Sock) {
	h.ai = 0
	s.CwndClamp = min(s.CwndClamp, hstcpMaxClamp)
}

func (h *HighSpeed) CongAvoid(s *Sock, acked uint32) {
	if !s.IsCwndLimited() {
		return
	}
	if s.InSlowStart() {
		s.SlowStart(acked)
		return
	}
	h.ai = hstcpIndex(s.Cwnd, h.ai)
	// cwnd += a(w)/cwnd per ACK (RFC 3649 §5): a(w) = ai+1.
	if s.Cwnd < s.CwndClamp {
		s.CwndCnt += h.ai + 1
		if s.CwndCnt >= s.Cwnd {
			s.CwndCnt -= s.Cwnd
			s.Cwnd++
		}
	}
}

// hstcpIndex moves the table index from ai to the entry covering cwnd.
func hstcpIndex(cwnd, ai uint32) uint32 {
	last := uint32(len(hstcpAIMD) - 1)
	for ai < last && cwnd > hstcpAIMD[ai].cwnd {
		ai++
	}
	for ai > 0 && cwnd <= hstcpAIMD[ai-1].cwnd {
		ai--
	}
	return ai
}

// SSThresh is the multiplicative decrease cwnd·(1 − b(w)) (RFC 3649 §5).
func (h *HighSpeed) SSThresh(s *Sock) uint32 {
	return max(s.Cwnd-(s.Cwnd*hstcpAIMD[h.ai].md>>8), 2)
}

func (*HighSpeed) SetState(*Sock, CAState) {}

func (*HighSpeed) CwndEvent(*Sock, Event) {}

func (*HighSpeed) UndoCwnd(s *Sock) uint32 { return RenoUndoCwnd(s) }

var highspeedVars = []VarDesc{
	{Name: "ai", Doc: "index into the RFC 3649 table"},
	{Name: "a", Doc: "additive increase a(w), packets per RTT"},
	{Name: "b", Doc: "multiplicative decrease b(w)"},
}

func (h *HighSpeed) Vars() []VarDesc { return highspeedVars }

func (h *HighSpeed) ReadVars(_ *Sock, dst []float64) {
	dst[0] = float64(h.ai)
	dst[1] = float64(h.ai + 1)
	dst[2] = float64(hstcpAIMD[h.ai].md) / 256
}
