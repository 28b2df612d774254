package cluster

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/coverage"
)

// Store parts (package doc, "Store parts"): names and messages.

// PartsBucket is the object store through which store parts travel
// between the coordinator and the store processes: object ID/J is part J
// as the coordinator loaded it (a new campaign's empty part, or a
// checkpoint's), ID/J.snap as the part last snapshotted it.
const PartsBucket = "actfuzz-parts"

func statesStream(id string) string         { return "ACTFUZZ_" + id + "_STATES" }
func statesSubject(id string, j int) string { return "actfuzz." + id + ".states." + strconv.Itoa(j) }
func partSubject(id string, j int) string   { return "actfuzz." + id + ".part." + strconv.Itoa(j) }
func partConsumer(j int) string             { return "part-" + strconv.Itoa(j) }
func loadObject(id string, j int) string    { return fmt.Sprintf("%s/%d", id, j) }
func snapObject(id string, j int) string    { return fmt.Sprintf("%s/%d.snap", id, j) }

// hdrShare names a share on the states stream: "i<index>" for a worker's
// result, "l<epoch>.<merge>.<item>" for the coordinator's own states (the
// symbolic step's branches).
const hdrShare = "Actfuzz-Share"

// hdrShareSum is the SHA-256 (hex) of the whole share, whose pieces (a
// share over max_payload, each with an Actfuzz-Part "i/n" header) the
// part puts together.
const hdrShareSum = "Actfuzz-Share-Sum"

// maxSharePieces bounds the pieces of one share.
const maxSharePieces = 4096

// publishShare publishes share j of a simulation on the campaign's states
// stream, in pieces of at most payload bytes, and returns its SHA-256.
func publishShare(ctx context.Context, js jetstream.JetStream, payload int, id string, j int, key string, data []byte) ([]byte, error) {
	sum := sha256.Sum256(data)
	n := max(1, (len(data)+payload-1)/payload)
	if n > maxSharePieces {
		return nil, fmt.Errorf("%w: a share of %d bytes", errTooLarge, len(data))
	}
	for i := range n {
		msg := &nats.Msg{Subject: statesSubject(id, j), Header: nats.Header{}, Data: data[i*payload : min(len(data), (i+1)*payload)]}
		msg.Header.Set(hdrCampaign, id)
		msg.Header.Set(hdrShare, key)
		msg.Header.Set(hdrShareSum, hex.EncodeToString(sum[:]))
		if n > 1 {
			msg.Header.Set(hdrPart, fmt.Sprintf("%d/%d", i, n))
		}
		if err := retry(ctx, func() error {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			_, err := js.PublishMsg(pctx, msg)
			return err
		}); err != nil {
			return nil, fmt.Errorf("publishing share %d of %s: %w", j, key, err)
		}
	}
	return sum[:], nil
}

func workerShareKey(index int) string { return "i" + strconv.Itoa(index) }

// partsStore opens (creating it if needed) the object store of parts.
// Its requests are sent again when nc reconnects (reconnect.go).
func partsStore(ctx context.Context, nc *nats.Conn, js jetstream.JetStream, create bool) (obs jetstream.ObjectStore, err error) {
	err = againAfterReconnect(ctx, nc, func(ctx context.Context) error {
		obs, err = js.ObjectStore(ctx, PartsBucket)
		if err == nil || !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
			return err
		}
		obs, err = js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: PartsBucket, Storage: jetstream.FileStorage,
			Description: "actfuzz campaigns' coverage store parts"})
		return err
	})
	return obs, err
}

// partRequest is a coordinator's request to a store part, on
// actfuzz.ID.part.J (core NATS request-reply).
type partRequest struct {
	Op string // opLoad, opMerge, opNews, opPool, opCount, opSnapshot
	// Epoch is the coordinator's: a part serves the coordinator that
	// loaded it last, and refuses the requests of another.
	Epoch int64
	// Seq is the number of merges the part has done (for opMerge: will
	// have done), counted from its load: a request for another state of
	// the store is refused, a merge repeated is answered again.
	Seq uint64
	// opLoad: the object to load (PartsBucket), its SHA-256, the parts,
	// and part 0's out-of-range limit.
	Object     string
	Sum        []byte
	Parts      int
	OutOfRange int
	// opLoad: the campaign's memory budget given to the coordinator (0:
	// none), for a process without a cap of its own (partCap). It comes
	// with every load, so a coordinator resumed with a larger budget
	// raises it.
	Memory int64
	// opMerge: the simulations, in order.
	Items []shareItem
	// opNews: the chunk of the last merge's news wanted.
	Chunk int
	// opPool, opCount: the state, by its key (coverage.PoolSource: the
	// index names its states by region, the part by shard); for opPool,
	// Keys states: their keys, of one length, one after the other.
	Key  []uint64
	Keys int
}

// shareItem names a simulation's share by key and SHA-256, with the
// store's config id of the simulation.
type shareItem struct {
	Key    string
	Sum    []byte
	Config uint64
}

const (
	opLoad     = "load"
	opMerge    = "merge"
	opNews     = "news"
	opPool     = "pool"
	opCount    = "count"
	opSnapshot = "snapshot"
)

// partReply is a store part's answer.
type partReply struct {
	Err string
	// Missing: the merge waits for shares not yet received (ask again).
	Missing bool
	// opMerge, opNews: the merge's news (every item's PartNews encoding,
	// each after its length as a uvarint), in chunks of at most
	// max_payload less 1 KiB: its size, SHA-256, chunk count and chunk.
	Size   int
	Sum    []byte
	Chunks int
	Data   []byte
	// opPool: the pools, one after the other, Lens their lengths;
	// opCount: the count.
	Visits []coverage.Visit
	Lens   []int
	Count  uint64
	// Capped, after a merge: the part is over its memory cap, and this
	// merge was its last (why, for the user).
	Capped string
	// NotLoaded: the process has no part to answer from (it restarted,
	// and lost it).
	NotLoaded bool
}

// maxPartMsg bounds a request or reply of the parts' protocol that is
// decoded (the rest is at most max_payload).
const maxPartMsg = 64 << 20
