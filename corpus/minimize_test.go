package corpus

import (
	"context"
	"testing"

	"github.com/actfuzz/actfuzz/netenv"
)

func TestMinimize(t *testing.T) {
	s := testSeed(5)
	s.Bytes = 2_000_000
	s.Finding = &Finding{Condition: "big", When: "cwnd > 20", Kind: "condition"}
	r, err := Replay(context.Background(), s, nil)
	if err != nil || r.HitTimeNS < 0 {
		t.Fatalf("the test seed must hit: %v", err)
	}
	s.Finding.TimeNS, s.Finding.State = r.HitTimeNS, r.HitState
	m, rep, err := Minimize(context.Background(), netenv.Native{}, s, 200)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	if len(m.Schedule) > len(s.Schedule) || m.Bytes > s.Bytes || m.Finding.TimeNS > s.Finding.TimeNS {
		t.Fatalf("minimization grew the seed: %+v", rep)
	}
	if len(m.Schedule) != 1 {
		t.Errorf("the switch is irrelevant to cwnd > 20 yet %d phases remain", len(m.Schedule))
	}
	if m.Schedule[0].Env.Loss != 0 || m.Schedule[0].Env.QShape != 0 {
		t.Errorf("loss and queuing delay were not simplified away: %+v", m.Schedule[0].Env)
	}
	got, err := Replay(context.Background(), m, nil)
	if err != nil || !got.Reproduced {
		t.Fatalf("minimized seed does not reproduce: %v %v", err, got.Diff)
	}
}
