package cluster

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/netenv"
)

// Bucket is the KV bucket of campaign headers, one key per campaign id.
const Bucket = "actfuzz-campaigns"

// TraceBucket is the object store of the campaigns' trace files (the
// user's, link_traces:): object ID/i is trace file i of campaign ID, its
// gzipped content. They are kept out of the KV record and the Work
// messages, which would otherwise exceed the server's max_payload (1 MB by
// default) with traces of a few MB; an object store cuts them in chunks.
const TraceBucket = "actfuzz-traces"

// maxTraceObject bounds a trace file's object (gzipped) that a worker
// host reads.
const maxTraceObject = 256 << 20

func traceObject(id string, i int) string { return fmt.Sprintf("%s/%d", id, i) }

// ErrHeaderTooLarge: the campaign header (its campaign file) does not fit
// in a message of the NATS server.
var ErrHeaderTooLarge = errors.New("campaign header too large for the NATS server")

// light is h with its trace files' names and SHA-256 but not their
// content: what the KV record and the Work messages carry. The sums that
// identify a campaign (workSum, sameHeader) depend only on those.
func light(h act.CampaignHeader) act.CampaignHeader {
	if len(h.LinkTraces) == 0 {
		return h
	}
	l := h
	l.LinkTraces = make([]*netenv.LinkTraceFile, len(h.LinkTraces))
	for i, f := range h.LinkTraces {
		l.LinkTraces[i] = &netenv.LinkTraceFile{Name: f.Name, SHA256: f.SHA256}
	}
	return l
}

// traces opens (creating it if needed) the object store of trace files.
func traces(ctx context.Context, js jetstream.JetStream, create bool) (jetstream.ObjectStore, error) {
	obs, err := js.ObjectStore(ctx, TraceBucket)
	if err == nil || !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return obs, err
	}
	return js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: TraceBucket, Storage: jetstream.FileStorage,
		Description: "actfuzz campaigns' trace files (link_traces:), gzipped"})
}

// fetchTraces returns rec's header with the content of its trace files,
// read from the object store and checked against the SHA-256 the record
// names (netenv.LinkTraceFile.Load). bad says that the objects are not
// what the record names (too large, another content): the campaign is to
// be refused, not tried again.
func fetchTraces(ctx context.Context, js jetstream.JetStream, id string, h act.CampaignHeader) (full act.CampaignHeader, bad bool, err error) {
	if len(h.LinkTraces) == 0 {
		return h, false, nil
	}
	obs, err := traces(ctx, js, false)
	if err != nil {
		return h, false, fmt.Errorf("object store %s: %w", TraceBucket, err)
	}
	full = h
	full.LinkTraces = make([]*netenv.LinkTraceFile, len(h.LinkTraces))
	for i, f := range h.LinkTraces {
		if f == nil {
			return h, true, fmt.Errorf("trace file %d missing from the campaign header", i)
		}
		name := traceObject(id, i)
		info, err := obs.GetInfo(ctx, name)
		if err != nil {
			return h, false, fmt.Errorf("trace file %s (object %s): %w", f.Name, name, err)
		}
		if info.Size > maxTraceObject {
			return h, true, fmt.Errorf("trace file %s (object %s): %d bytes, at most %d", f.Name, name, info.Size, maxTraceObject)
		}
		octx, cancel := objectContext(ctx)
		b, err := obs.GetBytes(octx, name)
		cancel()
		if err != nil {
			return h, errors.Is(err, jetstream.ErrDigestMismatch), fmt.Errorf("trace file %s (object %s): %w", f.Name, name, err)
		}
		if len(b) > maxTraceObject {
			return h, true, fmt.Errorf("trace file %s (object %s): over %d bytes", f.Name, name, maxTraceObject)
		}
		g := &netenv.LinkTraceFile{Name: f.Name, SHA256: f.SHA256, Gzip: b}
		if err := g.Load(); err != nil {
			return h, true, err
		}
		full.LinkTraces[i] = g
	}
	return full, false, nil
}

// Message headers.
const (
	hdrCampaign = "Actfuzz-Campaign" // the campaign id
	hdrWork     = "Actfuzz-Work"     // SHA-256 (hex) of the Work message a Result answers
	hdrPart     = "Actfuzz-Part"     // "batch/index/i/n": part i of n of a result over max_payload
)

// partHeadroom is what a result part leaves of the server's max_payload
// for its headers.
const partHeadroom = 1024

// Consumer names. The coordinator's results consumer is named after its
// epoch (coordinatorConsumerOf).
const (
	workersConsumer     = "workers"
	coordinatorConsumer = "coordinator"
)

// coordinatorConsumerOf names the results consumer of the coordinator of
// epoch: an ack that a coordinator stopped past its lease sends once it
// is continued names a consumer its successor deleted, so the server
// drops it (fencing, coordlease.go).
func coordinatorConsumerOf(epoch int64) string {
	return coordinatorConsumer + "-" + strconv.FormatInt(epoch, 10)
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// ValidID reports whether id can name a campaign's streams.
func ValidID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("campaign id %q: want 1 to 64 letters, digits, '-' or '_'", id)
	}
	return nil
}

// CampaignID derives a campaign id from the things that make a campaign
// itself: its output directory (absolute), its file and its method. A
// resumed campaign gets the same id, and so its streams.
func CampaignID(out string, source []byte, method string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(out), out, len(method), method)
	h.Write(source)
	return "c" + hex.EncodeToString(h.Sum(nil))[:15]
}

func workStream(id string) string    { return "ACTFUZZ_" + id + "_WORK" }
func resultsStream(id string) string { return "ACTFUZZ_" + id + "_RESULTS" }

// workSubject is the subject the coordinator of epoch publishes chunks
// on; the work stream takes only its current coordinator's (fencing,
// coordlease.go).
func workSubject(id string, epoch int64) string {
	return "actfuzz." + id + ".work." + strconv.FormatInt(epoch, 10)
}
func resultSubject(id string) string { return "actfuzz." + id + ".results" }
func refusedSubject(id string) string {
	return "actfuzz." + id + ".refused"
}

// record is the value of a campaign's key in Bucket.
type record struct {
	Proto  int
	Header act.CampaignHeader
	Chunk  int
	// MaxResult is the largest result the coordinator takes
	// (Options.MaxResult): a host does not publish a larger one.
	MaxResult int
	// Parts, when not 0, is the number of store parts: hosts send each
	// result's states as shares to the parts' store processes.
	Parts int
	// Shards is the coverage store's shard count (the parts own shards).
	Shards int
}

func encodeRecord(r record) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(r); err != nil {
		return nil, fmt.Errorf("encoding the campaign header: %w", err)
	}
	return b.Bytes(), nil
}

func decodeRecord(b []byte) (record, error) {
	var r record
	if len(b) > maxRecord {
		return r, fmt.Errorf("campaign header of %d bytes", len(b))
	}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&r); err != nil {
		return r, fmt.Errorf("decoding the campaign header: %w", err)
	}
	return r, nil
}

// maxRecord bounds a campaign header (the campaign file is in it).
const maxRecord = 1 << 20

// sameHeader says whether two campaign headers name the same campaign.
func sameHeader(a, b act.CampaignHeader) bool {
	return a.Path == b.Path && a.Subject == b.Subject && a.Program == b.Program && bytes.Equal(a.Source, b.Source) &&
		a.TraceSums() == b.TraceSums()
}

// workSum is the SHA-256 (hex) of what a Work asks for: its campaign
// header, batch id and configurations, in a canonical binary form. (Not
// of the message's bytes: gob's type ids differ between processes, and a
// resumed coordinator must recognize the results of its predecessor's
// chunks.)
func workSum(w act.Work) string {
	h := sha256.New()
	var b []byte
	str := func(s []byte) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(w.Proto))
	str([]byte(w.Campaign.Path))
	str([]byte(w.Campaign.Subject))
	str([]byte(w.Campaign.Program))
	str(w.Campaign.Source)
	str([]byte(w.Campaign.TraceSums()))
	b = binary.AppendUvarint(b, w.BatchID)
	nparams := len(netenv.ParamNames())
	for _, it := range w.Items {
		b = binary.AppendVarint(b, int64(it.Index))
		b = binary.AppendUvarint(b, it.Config.Seed)
		b = binary.AppendVarint(b, int64(it.Config.Step))
		b = binary.AppendUvarint(b, uint64(len(it.Config.Schedule)))
		for _, ph := range it.Config.Schedule {
			b = binary.AppendVarint(b, int64(ph.Until))
			for i := range nparams {
				b = binary.LittleEndian.AppendUint64(b, math.Float64bits(ph.Env.Get(i)))
			}
		}
		h.Write(b)
		b = b[:0]
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

// ConnectOptions are how to reach a NATS system.
type ConnectOptions struct {
	URL   string // nats://host:4222, tls://host:4222; a comma-separated list for a cluster
	Creds string // a credentials file (JWT and NKey seed); "" for none
	CA    string // a PEM file of CAs to verify the server with (TLS); "" for the system's
	Cert  string // client certificate and key (PEM) for mutual TLS; "" for none
	Key   string
	Name  string // the connection's name, as the server shows it
	// Logger takes nats.go's asynchronous errors (a subscription's
	// consumer gone with a server restarted, a slow consumer), which it
	// would print to stderr itself; nil: slog's default.
	Logger *slog.Logger
}

// Redact hides a password in a NATS URL (for messages).
func Redact(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return u
	}
	return p.Redacted()
}

// Connect connects to NATS with nats.go's own options for credentials and
// TLS, reconnecting for ever (a server restart is waited out). Errors name
// the URL without its password.
func Connect(o ConnectOptions) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(o.Name), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.RetryOnFailedConnect(false)}
	log := cmp.Or(o.Logger, slog.Default())
	opts = append(opts, nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
		subject := ""
		if sub != nil {
			subject = sub.Subject
		}
		log.Warn("nats: asynchronous error", "subject", subject, "err", err)
	}))
	if o.Creds != "" {
		opts = append(opts, nats.UserCredentials(o.Creds))
	}
	if o.CA != "" {
		opts = append(opts, nats.RootCAs(o.CA))
	}
	if o.Cert != "" || o.Key != "" {
		opts = append(opts, nats.ClientCert(o.Cert, o.Key))
	}
	nc, err := nats.Connect(o.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", Redact(o.URL), err)
	}
	return nc, nil
}

// campaigns opens (creating it if needed) the bucket of campaign headers.
func campaigns(ctx context.Context, js jetstream.JetStream, create bool) (jetstream.KeyValue, error) {
	kv, err := js.KeyValue(ctx, Bucket)
	if err == nil || !create || !errors.Is(err, jetstream.ErrBucketNotFound) {
		return kv, err
	}
	return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket, Storage: jetstream.FileStorage,
		Description: "actfuzz campaign headers (campaign file, subject, build revision)", MaxValueSize: maxRecord})
}

// campaignIDs lists the keys of the campaign bucket kv (sorted, each
// once), waiting at most wait. jetstream's KeyValue.Keys waits for its
// watcher's end-of-initial-values marker without heeding its context:
// under -race a worker host once waited 9 minutes for a marker that never
// came, and its Serve could not end when told to (CI of 2026-11-24,
// TestWorkerOfAnotherBuildRefused; nats-io/nats.go#1824 fixed one such
// hang, with keys deleted during the listing). ListKeys heeds the
// context. A listing cut short is an error, not a shorter list: callers
// try again at their next poll, and a store process must not take a
// partial list for campaigns that ended.
func campaignIDs(ctx context.Context, kv jetstream.KeyValue, wait time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	kl, err := kv.ListKeys(ctx)
	if err != nil {
		return nil, err
	}
	defer kl.Stop()
	var keys []string
	for k := range kl.Keys() {
		keys = append(keys, k)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("listing the campaigns: %w", err)
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}

// listWait bounds a listing of the campaign bucket (campaignIDs).
const listWait = 10 * time.Second

// retry calls f until it succeeds or ctx ends, backing off up to 2 s
// (a server that restarts, a leader election).
func retry(ctx context.Context, f func() error) error {
	wait := 50 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}
