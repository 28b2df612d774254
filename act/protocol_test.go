package act

import (
	"bytes"
	"math"
	"reflect"
	"testing"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// Every message survives a frame unchanged, frames decode on their own,
// and a torn or unknown frame is an error.
func TestProtocolRoundTrip(t *testing.T) {
	msgs := []Message{
		Hello{Proto: ProtocolVersion, Program: "actfuzz test", PID: 42},
		Work{Proto: ProtocolVersion, Campaign: CampaignHeader{Path: "c.yaml", Source: []byte("ccai: [reno]\n"), Subject: "native", Program: "p"},
			BatchID: 7, Items: []WorkItem{{Index: 3, Config: Config{Seed: 9, Schedule: netenv.Constant(netenv.DefaultEnv()), Step: StepRandom}}}},
		Result{BatchID: 7, Index: 3, States: []byte{1, 2, 3}, Mean: []float64{1, 2.5}, Best: []float64{0.5, math.Inf(1)}, BestAt: []int64{-3, 1 << 40},
			Hits:  []Hit{{Condition: "c", When: "cwnd > 1", Flow: 1, TimeNS: 5, State: map[string]any{"cwnd": 3.0, "ca_state": "open"}}},
			Fault: &corpus.Finding{Kind: "panic", Detail: "x", State: map[string]any{"cwnd": 1.0}}, Capped: true, Events: 1 << 33},
		Result{BatchID: 8, Index: 4, States: []byte{}, Mean: []float64{1}, StatesDropped: 9 << 20},
		Result{BatchID: 9, Index: 5, States: []byte{}, Mean: []float64{1}, Shares: [][]byte{bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)}},
		Result{BatchID: 9, Index: 6, States: []byte{}, Mean: []float64{1}, Shares: [][]byte{bytes.Repeat([]byte{3}, 32)},
			Hits: []Hit{{Condition: "c", When: "cwnd > 1", Flow: 0, TimeNS: 5, State: map[string]any{"cwnd": 3.0}}}},
		Done{BatchID: 7},
		Failure{BatchID: 7, Text: "no"},
	}
	var stream bytes.Buffer
	for _, m := range msgs {
		if err := WriteMessage(&stream, m); err != nil {
			t.Fatal(err)
		}
	}
	raw := append([]byte(nil), stream.Bytes()...)
	for _, want := range msgs {
		got, err := ReadMessage(&stream)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%T: got %+v, want %+v", want, got, want)
		}
	}
	for _, bad := range [][]byte{raw[:len(raw)-1], {0, 0, 0, 1, 'Z'}, {0xff, 0, 0, 0}} {
		r := bytes.NewReader(bad)
		var err error
		for err == nil {
			_, err = ReadMessage(r)
		}
		if err.Error() == "EOF" && len(bad) == len(raw)-1 {
			t.Errorf("a torn frame read as a clean end")
		}
	}
}

// A result whose shares are not SHA-256 sums is not encoded, and one
// whose share count exceeds its bytes is not decoded.
func TestResultSharesMalformed(t *testing.T) {
	if _, err := EncodeMessage(Result{Shares: [][]byte{{1, 2}}}); err == nil {
		t.Error("a 2-byte share encoded")
	}
	body, err := EncodeMessage(Result{BatchID: 1, Shares: [][]byte{make([]byte, 32)}})
	if err != nil {
		t.Fatal(err)
	}
	// The share count is the byte before the share and the final 0.
	body[len(body)-34]++
	if m, err := DecodeMessage(body); err == nil {
		t.Errorf("two shares in the bytes of one decoded: %+v", m)
	}
	body[len(body)-34]--
	for cut := 1; cut < 34; cut++ {
		if m, err := DecodeMessage(body[:len(body)-cut]); err == nil {
			t.Errorf("a result cut by %d bytes decoded: %+v", cut, m)
		}
	}
}

func BenchmarkResultFrame(b *testing.B) {
	m := Result{BatchID: 7, Index: 3, States: make([]byte, 4000), Mean: make([]float64, 5)}
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := WriteMessage(&buf, m); err != nil {
			b.Fatal(err)
		}
		if _, err := ReadMessage(&buf); err != nil {
			b.Fatal(err)
		}
	}
}
