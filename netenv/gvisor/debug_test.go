package gvisor

import (
	"context"
	"encoding/binary"
	"os"
	"testing"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"

	"github.com/actfuzz/actfuzz/netenv"
	"github.com/actfuzz/actfuzz/netenv/observe"
)

func TestDebugPackets(t *testing.T) {
	if os.Getenv("GVDEBUG") == "" {
		t.Skip()
	}
	n := 0
	subj := &Subject{}
	subj.hooks.packet = func(now time.Duration, from string, b *buffer.Buffer) {
		var hd [60]byte
		b.ReadAt(hd[:], 0)
		ihl := int(hd[0]&0xf) * 4
		th := hd[ihl:]
		doff := int(th[12]>>4) * 4
		pl := int(b.Size()) - ihl - doff
		if n < 80 {
			t.Logf("%v %s seq=%d ack=%d flags=%#x len=%d win=%d optlen=%d", now, from, binary.BigEndian.Uint32(th[4:8]), binary.BigEndian.Uint32(th[8:12]), th[13], pl, binary.BigEndian.Uint16(th[14:16]), doff-20)
		}
		n++
	}
	env := netenv.DefaultEnv()
	env.Loss = 0
	res, err := subj.Run(context.Background(), config("reno", 1, env, 200_000), nil)
	t.Log(res, err)
}

func TestDebugTrace(t *testing.T) {
	if os.Getenv("GVDEBUG") == "" {
		t.Skip()
	}
	env := netenv.DefaultEnv()
	env.Loss = 0
	obs := &recObs{}
	cca := os.Getenv("GVCCA")
	res, err := (&Subject{}).Run(context.Background(), config(cca, 1, env, 1_000_000), obs)
	t.Log(res, err)
	var prev *observe.Record
	for i := range obs.recs {
		r := &obs.recs[i]
		if prev == nil || r.Reason != observe.ReasonAck || r.CAState != prev.CAState || i%50 == 0 {
			t.Logf("%v %v cwnd=%d ss=%d srtt=%v rto=%v st=%v prev=%v prior=%d infl=%d del=%d", r.Time, r.Reason, r.Cwnd, r.SSThresh, r.SRTT, r.RTO, r.CAState, r.PrevCAState, r.PriorCwnd, r.InFlight, r.Delivered)
		}
		prev = r
	}
}
