package cluster

import (
	"log/slog"
	"time"
)

// What a coordinator's Executor is configured with (Options) and what it
// counts (Stats).

// Options configure a coordinator's executor.
type Options struct {
	// ID names the campaign's streams (see ValidID, CampaignID).
	ID string
	// Resume keeps the results stream of an earlier coordinator of the
	// campaign (act.Options.Resume); otherwise its streams start empty.
	Resume bool
	// Chunk is the configurations per Work message (default 8).
	Chunk int
	// AckWait is how long a chunk may go without an ack or a heartbeat
	// before it is redelivered (default 30 s); MaxDeliver bounds its
	// deliveries before it is a dead letter (default 5).
	AckWait    time.Duration
	MaxDeliver int
	// MaxResult bounds a result message in bytes (default 8 MiB); the
	// server's max_payload must allow it.
	MaxResult int
	// Parts, when not 0, splits the coverage store into that many parts
	// kept by store processes (`actfuzz store --part J`): hosts send each
	// result's states to them, and the Executor is an act.StoreParts
	// (act.Options.StoreParts must be the same).
	Parts int
	// Memory is the campaign's memory budget given to the coordinator
	// (act.Campaign.GivenMemory; 0: none). A store process without a cap
	// of its own (StoreOptions.Memory) caps its part at the store's share
	// of it, as Run caps the coordinator's index (act.ErrIndexCapped):
	// every process of the campaign keeps to the budget.
	Memory int64
	// PartTimeout is how long the coordinator waits for a store part that
	// does not answer, or for shares its part lacks, before it stops the
	// campaign with an error naming the part (default 2 min).
	PartTimeout time.Duration
	// Lease is how long the coordinator's lease on its campaign may stay
	// unrenewed before another coordinator takes the campaign over
	// (default DefaultLease; lease.go).
	Lease  time.Duration
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.Chunk <= 0 {
		o.Chunk = 8
	}
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.MaxDeliver <= 0 {
		o.MaxDeliver = 5
	}
	if o.MaxResult <= 0 {
		o.MaxResult = 8 << 20
	}
	if o.PartTimeout <= 0 {
		o.PartTimeout = 2 * time.Minute
	}
	if o.Lease <= 0 {
		o.Lease = DefaultLease
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// maxWork bounds a Work message (a chunk of configurations and the
// campaign header).
const maxWork = 4 << 20

// Stats counts what the coordinator's executor received.
type Stats struct {
	Published  int // Work messages (chunks)
	Skipped    int // chunks not published again on resume: their results were in the stream
	Results    int // results accepted
	Assembled  int // of which results that came in parts (over the server's max_payload)
	Duplicates int // results of a configuration already received (redeliveries)
	// Redelivered counts the result messages delivered to the coordinator
	// again: one held unmerged past AckWait, a part deferred (Deferred),
	// or a delivery lost on its way (the server or the coordinator away).
	Redelivered int
	Stale       int            // results of configurations merged before (a resume)
	Rejected    map[string]int // by reason: never merged
	Refusals    int            // worker hosts that refused the campaign
	DeadLetter  int            // chunks given up after MaxDeliver deliveries
	Retried     int            // configurations of dead letters published again alone
	Crashes     int            // configurations charged a crash fault: alone, they reached MaxDeliver
	// HolderChanges counts the store parts' leases that changed hands
	// (a standby took a part over, or its holder stopped).
	HolderChanges int
	Remade        int // part consumers made again: a merge's shares stayed missing (redeliver.go)
	// Reissued counts the configurations published again alone because
	// a result of theirs was rejected for its content after its host
	// acked its chunk (a host's bug), or none came (a result lost;
	// spoiled.go).
	Reissued int
	Dropped  int // results accepted without their states: over MaxResult (capped)
	Deferred int // parts naked to come again: the parts held were at the limit
	// PartMerges counts the merges of the store parts and PartMergeWait
	// the time Run waited for them (the parts merging and answering):
	// a campaign's rate is bounded by batches over that wait.
	PartMerges    int
	PartMergeWait time.Duration
	// PoolRequests counts the selector's requests to the store parts
	// for pools (to draw a visit, ACT Method 1 line 8), PoolStates the
	// states they asked for, and PoolWait the time the selection waited
	// for their answers (requests to different parts overlap): with the
	// parts across a network, each request is a round trip on the
	// selection's path.
	PoolRequests int
	PoolStates   int
	PoolWait     time.Duration
}

// RejectedTotal is the number of rejected messages.
func (s Stats) RejectedTotal() int {
	n := 0
	for _, v := range s.Rejected {
		n += v
	}
	return n
}
