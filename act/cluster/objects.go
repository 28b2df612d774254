package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Objects put into JetStream's object store without overrunning the
// server.
//
// nats.go's ObjectStore.Put publishes an object's chunks asynchronously,
// up to 4,000 unacknowledged, and fails on the first chunk the server
// refuses. The server queues a stream's incoming messages up to 128 MB
// by default (its max_buffered_size) and refuses more with "429 too many
// requests" (JSStreamTooManyRequests, err_code 10167). A store part of a
// few hundred MB, snapshotted in chunks of the server's max_payload (8 MB
// in bench/cluster-aged.sh), overran it: an aged campaign's checkpoint
// failed between 21,632 and 25,000 full-length simulations (`run` exited
// 3), and two 400 MB objects put at once failed the same way on an
// embedded server (TestPutObjectPaced). Smaller chunks do not cure it: at
// 32 KB the 4,000 unacknowledged chunks stall Put for its 200 ms and it
// fails with ErrTooManyStalledMsgs instead.
//
// So chunks are at most objectChunk (both 1 MB and 128 KB passed where 8
// MB and 32 KB failed), and a Put the server could not keep up with is
// retried from the start, its reader held to half the rate of the attempt
// that failed (down to minPutRate), until the object's deadline.

// objectTimeout bounds the transfer of one object when the caller's
// context has no deadline. Without one, nats.go bounds the whole call by
// its DefaultTimeout, 5 s, the whole object's read included: the resume of
// an aged campaign (25,000 full-length simulations, a 927 MB checkpoint)
// failed its parts' loads with "nats: timeout" and "read pipe: i/o
// timeout"; with objectTimeout it loaded them (bench/results/resume-store-parts-20261124.md).
const objectTimeout = 10 * time.Minute

// objectContext is ctx, with objectTimeout as its deadline if it has none.
func objectContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, objectTimeout)
}

// digestIs reports whether info's digest, the SHA-256 of the object's
// bytes as they were put (which the client checks them against when a
// read reaches their end), is sum.
func digestIs(info *jetstream.ObjectInfo, sum []byte) bool {
	digest, err := jetstream.DecodeObjectDigest(info.Digest)
	return err == nil && bytes.Equal(digest, sum)
}

// objectChunk is the largest chunk of an object put.
const objectChunk = 1 << 20

// minPutRate is the slowest pace (bytes a second) an overloaded put is
// slowed to. A starved server (a machine at load 20 took less than
// 1.5 MB/s, issue 47) is waited out by halving the pace at each refusal
// down to this floor; only the object's deadline (objectTimeout, or the
// caller's) ends the attempts, so a busy machine slows a put and never
// fails it.
const minPutRate = 64 << 10

// overloaded reports whether err is the server's or the client's refusal
// of more chunks in flight.
func overloaded(err error) bool {
	var api *jetstream.APIError
	return errors.Is(err, jetstream.ErrTooManyStalledMsgs) ||
		errors.As(err, &api) && (api.Code == 429 || api.ErrorCode == 10167)
}

// putObject puts the object that open reads (each call a new reader of
// the same bytes; closing it stops whatever produces them) into obs as
// meta, in chunks of at most min(payload, objectChunk) bytes; retry is
// how long to wait before attempt i+1 (nil: i seconds, at most 10). A put that nc's
// reconnection cut short is put again at once.
func putObject(ctx context.Context, nc *nats.Conn, obs jetstream.ObjectStore, meta jetstream.ObjectMeta, payload int,
	open func() io.ReadCloser, retry func(i int) time.Duration) (*jetstream.ObjectInfo, error) {
	ctx, cancel := objectContext(ctx)
	defer cancel()
	meta.Opts = &jetstream.ObjectMetaOptions{ChunkSize: uint32(max(1, min(payload, objectChunk)))}
	if retry == nil {
		retry = func(i int) time.Duration { return time.Duration(min(i, 10)) * time.Second }
	}
	var rate float64 // bytes a second the reader is held to (0: as fast as it goes)
	for attempt := 1; ; attempt++ {
		// A put cut short by a reconnection is put again whole (a
		// chunk, or the object's final record, may have gone with the
		// connection; reconnect.go).
		var r *pacedReader
		var info *jetstream.ObjectInfo
		err := againAfterReconnect(ctx, nc, func(ctx context.Context) error {
			r = &pacedReader{r: open(), rate: rate, start: time.Now()}
			var err error
			info, err = obs.Put(ctx, meta, r)
			r.r.Close()
			return err
		})
		if err == nil || !overloaded(err) {
			return info, err
		}
		// Half the pace the refused attempt reached, and never faster
		// than the pace refused before: the pace only falls.
		reached := float64(r.n) / max(time.Since(r.start).Seconds(), 1e-3)
		if rate > 0 {
			reached = min(reached, rate)
		}
		rate = max(reached/2, minPutRate)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (the server could not keep up %d times, the last time at %.2f MB/s, until %w)", err, attempt, rate/1e6, context.Cause(ctx))
		case <-time.After(retry(attempt)):
		}
	}
}

// pacedReader reads r at most rate bytes a second from start (0: no
// limit).
type pacedReader struct {
	r     io.ReadCloser
	rate  float64
	start time.Time
	n     int64 // bytes read
}

func (p *pacedReader) Read(b []byte) (int, error) {
	if p.rate > 0 {
		if ahead := time.Duration(float64(p.n)/p.rate*1e9) - time.Since(p.start); ahead > 0 {
			time.Sleep(ahead)
		}
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// sizedReader reads an object of known size, and says how much of it is
// left (Len), so that the part's decoder sizes its tables from it.
type sizedReader struct {
	r    io.Reader
	left int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}

// Len is the number of bytes not yet read.
func (s *sizedReader) Len() int { return int(max(s.left, 0)) }
