package act

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// configLogFixture appends n configurations of the small campaign's RAN
// selector (every seventh with a second phase) to l and returns them.
func configLogFixture(t testing.TB, l *configLog, n int) []Config {
	c := smallCampaign(t)
	sel := &selector{c: c, method: "ran", src: newSource(1, "ran"), log: l}
	sel.rng = rand.New(sel.src)
	var out []Config
	for range n {
		g := sel.nextBatch(nil, 1)[0]
		if len(out)%7 == 0 {
			g.Schedule = append(g.Schedule, g.Schedule[0])
			g.Schedule[0].Until = 12345678
		}
		out = append(out, g)
		if err := l.append(g); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// Reads between appends, as the selector makes them: a record read while
// its block is still growing, or still in the write buffer, is the one
// appended, and so is every record read again later.
func TestConfigLogReadsBetweenAppends(t *testing.T) {
	l, err := openConfigLog(filepath.Join(t.TempDir(), "configs.log"), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	rng := rand.New(rand.NewPCG(3, 3))
	var want []Config
	for round := range 40 {
		want = append(want, configLogFixture(t, l, 1+rng.IntN(50))...)
		for _, i := range []int{len(want) - 1, rng.IntN(len(want)), len(want) / 2, round} {
			if i >= len(want) {
				continue
			}
			g, err := l.get(i)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, want[i]) {
				t.Fatalf("round %d, record %d of %d = %+v, want %+v", round, i, len(want), g, want[i])
			}
		}
	}
	if _, err := l.get(len(want)); err == nil {
		t.Fatal("a record past the end: no error")
	}
}

// BenchmarkConfigLogGet reads random records of a log of 100,000, one
// append between reads, as the selector reads the configurations of pool
// visits while Run appends those it chooses.
//
//	go test ./act -run '^$' -bench ConfigLogGet
func BenchmarkConfigLogGet(b *testing.B) {
	l, err := openConfigLog(filepath.Join(b.TempDir(), "configs.log"), 0)
	if err != nil {
		b.Fatal(err)
	}
	defer l.close()
	gs := configLogFixture(b, l, 100000)
	rng := rand.New(rand.NewPCG(4, 4))
	for b.Loop() {
		if _, err := l.get(rng.IntN(l.len())); err != nil {
			b.Fatal(err)
		}
		if err := l.append(gs[rng.IntN(len(gs))]); err != nil {
			b.Fatal(err)
		}
	}
}

// A record's length, found in a block's bytes (recordLen) or in a stream
// (skipRecord, when a log is reopened), is the length encodeConfig wrote,
// whatever the size of the phases' varints; a truncated record is an
// error.
func TestConfigRecordLen(t *testing.T) {
	l, err := openConfigLog("", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	gs := configLogFixture(t, l, 20)
	for _, until := range []int64{-1, 63, 64, -65, 1 << 40, -(1 << 62), 1<<63 - 1} {
		g := gs[0]
		g.Schedule = append(g.Schedule[:1:1], g.Schedule[0])
		g.Schedule[0].Until = time.Duration(until)
		gs = append(gs, g)
	}
	for i, g := range gs {
		rec := encodeConfig(nil, g)
		if n, err := recordLen(append(rec, 0xff)); err != nil || n != len(rec) {
			t.Fatalf("config %d: recordLen %d, %v; want %d", i, n, err, len(rec))
		}
		if n, err := skipRecord(bufio.NewReader(bytes.NewReader(rec))); err != nil || n != int64(len(rec)) {
			t.Fatalf("config %d: skipRecord %d, %v; want %d", i, n, err, len(rec))
		}
		if _, err := recordLen(rec[:len(rec)-1]); err == nil {
			t.Fatalf("config %d: a truncated record: no error", i)
		}
	}
}
