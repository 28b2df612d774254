package act

import (
	"slices"
	"time"
)

// checkpointPace spaces the checkpoints of a campaign with store parts. Such
// a checkpoint moves every part through the object store, so it takes longer
// as the store grows, and the campaign waits
// for it: it comes after 50 times the duration of a checkpoint, so that
// checkpoints cost at most 2% of the campaign's time. But
//
//   - the duration that counts is the shortest of the last three, and the
//     period at most doubles from one checkpoint to the next. A checkpoint
//     that waited out a failure (a nats-server restart: its requests are
//     made again once the connection is back, cluster/reconnect.go) says
//     nothing of what the next one costs. By its duration alone, one that
//     waited 9 s would put the next 7.5 minutes away, all of which a
//     campaign whose coordinator or part then dies loses;
//   - the period is at most maxCheckpointPeriod, so a coordinator that dies
//     loses at most that much work, whatever the store's size (beyond a
//     checkpoint of 12 s, checkpoints then cost more than 2%);
//   - it is at least the campaign's own period (Options.CheckpointEvery),
//     which is also the first.
type checkpointPace struct {
	least  time.Duration   // Options.CheckpointEvery
	period time.Duration   // the time from one checkpoint to the next
	took   []time.Duration // the last durations, oldest first
}

// newCheckpointPace returns the pace of a campaign whose own period is
// least (its first period).
func newCheckpointPace(least time.Duration) checkpointPace {
	return checkpointPace{least: least, period: least}
}

// maxCheckpointPeriod bounds the time between two checkpoints of a
// campaign with store parts (see checkpointPace).
const maxCheckpointPeriod = 10 * time.Minute

// paceWindow is how many of the last checkpoints' durations the pace keeps.
const paceWindow = 3

// record notes a checkpoint that took d and returns the time to wait
// before the next one.
func (p *checkpointPace) record(d time.Duration) time.Duration {
	if len(p.took) == paceWindow {
		p.took = append(p.took[:0], p.took[1:]...)
	}
	p.took = append(p.took, d)
	p.period = max(p.least, min(50*slices.Min(p.took), 2*p.period, maxCheckpointPeriod))
	return p.period
}
