package main

import "github.com/actfuzz/actfuzz/ccai"

// Gentle is AIMD with a gentler decrease, β = 0.8, registered as "gentle".
type Gentle struct{ losses uint32 }

func (*Gentle) Init(*ccai.Sock) {}
func (g *Gentle) SSThresh(s *ccai.Sock) uint32 {
	g.losses++
	return max(s.Cwnd*4/5, 2)
}
func (*Gentle) CongAvoid(s *ccai.Sock, acked uint32) { ccai.RenoCongAvoid(s, acked) }
func (*Gentle) SetState(*ccai.Sock, ccai.CAState)    {}
func (*Gentle) CwndEvent(*ccai.Sock, ccai.Event)     {}
func (*Gentle) UndoCwnd(s *ccai.Sock) uint32         { return ccai.RenoUndoCwnd(s) }

// Vars exposes the number of reductions to conditions and to S.
func (*Gentle) Vars() []ccai.VarDesc {
	return []ccai.VarDesc{{Name: "losses", Doc: "reductions so far"}}
}
func (g *Gentle) ReadVars(_ *ccai.Sock, dst []float64) { dst[0] = float64(g.losses) }

func init() {
	ccai.Register(ccai.Info{Name: "gentle", Description: "AIMD with β = 0.8 (example)", New: func() ccai.Algorithm { return &Gentle{} }})
}
