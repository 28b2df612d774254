package act

// The worker protocol (version 1) connects a coordinator (Run) to the
// processes that run simulations: locally an `actfuzz worker` child over
// its stdin and stdout, and, unchanged, remote workers pulling work from a
// queue (NATS JetStream: one Work message per queue message, Results and
// Done published back). Every message is self-contained: a Work carries
// the whole campaign header, so a worker that has never seen the campaign
// (a fresh process, a machine that joined late) can serve it.
//
// Framing: a frame is a 4-byte big-endian length L (at most maxFrame), then
// L bytes: one message-type byte and the gob encoding of the message by a
// fresh gob.Encoder (so a frame decodes on its own, without the stream's
// earlier type definitions) — except Result, the message per simulation,
// whose fixed part is a plain binary encoding (Result.appendBinary) and
// only its rare part (hits, fault) gob.
//
//	type  message       direction             meaning
//	'H'   Hello         worker → coordinator  first frame: protocol version, program, pid
//	'W'   Work          coordinator → worker  campaign header, batch id, configurations with their indices
//	'R'   Result        worker → coordinator  one per configuration, in the Work's order: observations,
//	                                          mean state, condition hits (findings), subject fault
//	'D'   Done          worker → coordinator  after the last Result of a Work (a queue acks the Work here)
//	'E'   Failure       worker → coordinator  the worker cannot serve a Work (bad campaign, other version);
//	                                          the campaign stops: this is not a property of a configuration
//
// A Work is rebuilt by the worker into a campaign (ParseCampaign of the
// header's source) and a subject (by name); both are cached by header. A
// worker refuses a Work whose Program (corpus.ProgramVersion) differs from
// its own, since its results would not be those of the coordinator's
// seeds. Results carry the configuration index, so they may be merged in
// any arrival order; the coordinator merges in index order.
//
// Faults of the process itself (a hang past the watchdog, memory over the
// limit, a crash) cannot be reported by the worker: the supervisor
// (isolate.go) observes them and makes the Result.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/gob"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/coverage"
	"github.com/actfuzz/actfuzz/netenv"
)

// ProtocolVersion is the version of the worker protocol.
// 2: Result carries the directed step's best distances; 3: and the
// simulated events; 4: states as differences (coverage batch encoding 2)
// and the campaign header carries the user's trace files; 5: Result
// says when a cluster host dropped its states (StatesDropped); 6: or
// sent them to the store parts (Shares); 7: Shares in Result's binary
// part (its gob part cost a cluster's coordinator 0.1 ms per result).
const ProtocolVersion = 7

// maxFrame bounds a frame (a Result holds one simulation's distinct states).
const maxFrame = 1 << 30

// Message is one of Hello, Work, Result, Done and Failure.
type Message interface{ msgType() byte }

// Hello is a worker's first message.
type Hello struct {
	Proto   int
	Program string // corpus.ProgramVersion() of the worker
	PID     int
}

// CampaignHeader identifies a campaign and what runs it.
type CampaignHeader struct {
	Path    string // the campaign file's name, for messages
	Source  []byte // the campaign YAML as read (Campaign.Source)
	Subject string // netenv.Subject name (netenv.SubjectNames)
	Program string // corpus.ProgramVersion() of the coordinator
	// LinkTraces are the user's trace files the campaign names
	// (link_traces:), with their content: a worker needs no copy.
	LinkTraces []*netenv.LinkTraceFile
}

// TraceSums lists the SHA-256 of the header's trace files, for the sums
// that identify a campaign ("" without any, so that those stay as they
// were).
func (h CampaignHeader) TraceSums() string {
	var b strings.Builder
	for _, f := range h.LinkTraces {
		b.WriteString("|" + f.Name + ":" + f.SHA256)
	}
	return b.String()
}

// sum identifies the campaign's content in checkpoints: the YAML, and the
// trace files it names (their content may change under the same name).
func (c *Campaign) sum() [32]byte {
	return sha256.Sum256(append(slices.Clip(c.Source), c.Header("").TraceSums()...))
}

// Header is the campaign's header for subject.
func (c *Campaign) Header(subject string) CampaignHeader {
	return CampaignHeader{Path: c.Path, Source: c.Source, Subject: subject, Program: corpus.ProgramVersion(), LinkTraces: c.LinkTraces}
}

// WorkItem is one configuration with its index in the campaign.
type WorkItem struct {
	Index  int
	Config Config
}

// Work asks a worker to run configurations.
type Work struct {
	Proto    int
	Campaign CampaignHeader
	BatchID  uint64
	Items    []WorkItem
}

// Hit is a condition hit: a finding before grouping.
type Hit struct {
	Condition string
	When      string
	While     string `json:",omitempty"`
	For       string `json:",omitempty"`
	Flow      int
	TimeNS    int64
	State     map[string]any
}

// Result is what one simulation observed.
type Result struct {
	BatchID uint64
	Index   int
	States  []byte    // the coverage.Batch (coverage.Batch.MarshalBinary)
	Mean    []float64 // mean state over the run (S order); nil if none
	// Best and BestAt are, per condition of the campaign, the smallest
	// branch distance the run reached and when (directed ACT); nil when
	// the campaign is not directed.
	Best   []float64
	BestAt []int64
	Hits   []Hit
	Fault  *corpus.Finding // a fault of the subject (panic, nan, zero-cwnd, event-cap, …)
	Capped bool            // stopped by the simulated-time cap
	// Events is the number of simulated events: the unit the symbolic
	// step's cost is measured in (symstep.go).
	Events uint64
	// StatesDropped, when not 0, is the size in bytes of this result as
	// the simulation made it, over the limit of the cluster coordinator
	// that it was for (act/cluster Options.MaxResult): the worker host
	// sent it without its States, so its coverage is not merged while
	// everything else (hits, fault, mean state, distances) is. A cap,
	// counted in Report.StatesDropped; a local run never drops states.
	StatesDropped int
	// Shares, when set, are the SHA-256 of the shares of the states
	// (coverage.Batch.Share) that a cluster host sent to each store part
	// (act/cluster: the campaign's store is split into parts kept by
	// store processes), in part order; States is then empty.
	Shares [][]byte
	// Decoded, when set, is States already decoded by an Executor that
	// had to decode them to validate the result, so that Run does not
	// decode them again. It is not part of the message.
	Decoded *coverage.Batch
}

// Done follows the last Result of a Work.
type Done struct{ BatchID uint64 }

// Failure says that a worker cannot serve a Work.
type Failure struct {
	BatchID uint64
	Text    string
}

func (Hello) msgType() byte   { return 'H' }
func (Work) msgType() byte    { return 'W' }
func (Result) msgType() byte  { return 'R' }
func (Done) msgType() byte    { return 'D' }
func (Failure) msgType() byte { return 'E' }

// EncodeMessage returns the frame body of m (type byte and gob), without
// the length: the body of a queue message.
func EncodeMessage(m Message) ([]byte, error) {
	if r, ok := m.(Result); ok {
		return r.appendBinary([]byte{'R'})
	}
	var b bytes.Buffer
	b.WriteByte(m.msgType())
	if err := gob.NewEncoder(&b).Encode(m); err != nil {
		return nil, fmt.Errorf("encoding %T: %w", m, err)
	}
	return b.Bytes(), nil
}

// resultRare is the gob-encoded part of a Result: what most lack.
type resultRare struct {
	Hits          []Hit
	Fault         *corpus.Finding
	StatesDropped int
}

// appendBinary is the encoding of a Result, the one message per
// simulation, without gob's per-message type descriptions: uvarint
// BatchID, zig-zag varint Index, uvarint length and the States bytes,
// uvarint count and the IEEE 754 bits (little endian) of Mean, uvarint
// count and, for each, the bits of Best and the zig-zag varint BestAt,
// uvarint Events, a byte Capped, uvarint count and the bytes of the
// Shares (sha256.Size each), then a byte 0, or 1 and the gob of {Hits,
// Fault, StatesDropped}.
func (r Result) appendBinary(b []byte) ([]byte, error) {
	b = binary.AppendUvarint(b, r.BatchID)
	b = binary.AppendVarint(b, int64(r.Index))
	b = binary.AppendUvarint(b, uint64(len(r.States)))
	b = append(b, r.States...)
	b = binary.AppendUvarint(b, uint64(len(r.Mean)))
	for _, x := range r.Mean {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	b = binary.AppendUvarint(b, uint64(len(r.Best)))
	for i, x := range r.Best {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		b = binary.AppendVarint(b, r.BestAt[i])
	}
	b = binary.AppendUvarint(b, r.Events)
	b = append(b, boolByte(r.Capped))
	b = binary.AppendUvarint(b, uint64(len(r.Shares)))
	for _, s := range r.Shares {
		if len(s) != sha256.Size {
			return nil, fmt.Errorf("encoding a result: a share's SHA-256 of %d bytes", len(s))
		}
		b = append(b, s...)
	}
	if len(r.Hits) == 0 && r.Fault == nil && r.StatesDropped == 0 {
		return append(b, 0), nil
	}
	var g bytes.Buffer
	g.WriteByte(1)
	if err := gob.NewEncoder(&g).Encode(resultRare{r.Hits, r.Fault, r.StatesDropped}); err != nil {
		return nil, fmt.Errorf("encoding a result: %w", err)
	}
	return append(b, g.Bytes()...), nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func decodeResult(b []byte) (Result, error) {
	var r Result
	bad := fmt.Errorf("malformed result")
	uv := func() uint64 {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return x
	}
	r.BatchID = uv()
	idx, n := binary.Varint(b)
	if n <= 0 {
		return r, bad
	}
	b = b[n:]
	r.Index = int(idx)
	if k := uv(); k <= uint64(len(b)) {
		r.States, b = b[:k:k], b[k:]
	} else {
		return r, bad
	}
	if k := uv(); k <= uint64(len(b))/8 {
		if k > 0 {
			r.Mean = make([]float64, k)
		}
		for i := range r.Mean {
			r.Mean[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		b = b[8*k:]
	} else {
		return r, bad
	}
	if k := uv(); k <= uint64(len(b))/9 {
		for range k {
			if len(b) < 8 {
				return r, bad
			}
			r.Best = append(r.Best, math.Float64frombits(binary.LittleEndian.Uint64(b)))
			at, n := binary.Varint(b[8:])
			if n <= 0 {
				return r, bad
			}
			r.BestAt = append(r.BestAt, at)
			b = b[8+n:]
		}
	} else {
		return r, bad
	}
	ev, n := binary.Uvarint(b)
	if n <= 0 {
		return r, bad
	}
	r.Events, b = ev, b[n:]
	if len(b) < 2 || b[0] > 1 {
		return r, bad
	}
	r.Capped = b[0] == 1
	b = b[1:]
	if k := uv(); k <= uint64(len(b))/sha256.Size {
		if k > 0 {
			r.Shares = make([][]byte, k)
		}
		for i := range r.Shares {
			r.Shares[i], b = b[:sha256.Size:sha256.Size], b[sha256.Size:]
		}
	} else {
		return r, bad
	}
	switch {
	case len(b) == 0:
		return r, bad
	case b[0] == 0 && len(b) == 1:
		return r, nil
	case b[0] == 1:
		var rare resultRare
		if err := gob.NewDecoder(bytes.NewReader(b[1:])).Decode(&rare); err != nil {
			return r, fmt.Errorf("malformed result: %w", err)
		}
		if rare.StatesDropped < 0 {
			return r, bad
		}
		r.Hits, r.Fault, r.StatesDropped = rare.Hits, rare.Fault, rare.StatesDropped
		return r, nil
	}
	return r, bad
}

// DecodeMessage decodes a frame body.
func DecodeMessage(body []byte) (Message, error) {
	if len(body) == 0 {
		return nil, fmt.Errorf("empty message")
	}
	var m Message
	dec := gob.NewDecoder(bytes.NewReader(body[1:]))
	var err error
	switch body[0] {
	case 'H':
		var x Hello
		err, m = dec.Decode(&x), x
	case 'W':
		var x Work
		err, m = dec.Decode(&x), x
	case 'R':
		return decodeResult(body[1:])
	case 'D':
		var x Done
		err, m = dec.Decode(&x), x
	case 'E':
		var x Failure
		err, m = dec.Decode(&x), x
	default:
		return nil, fmt.Errorf("unknown message type %q", body[0])
	}
	if err != nil {
		return nil, fmt.Errorf("decoding message %q: %w", body[0], err)
	}
	return m, nil
}

// WriteMessage writes m as one length-prefixed frame.
func WriteMessage(w io.Writer, m Message) error {
	body, err := EncodeMessage(m)
	if err != nil {
		return err
	}
	var n [4]byte
	binary.BigEndian.PutUint32(n[:], uint32(len(body)))
	if _, err := w.Write(append(n[:], body...)); err != nil {
		return fmt.Errorf("writing %T: %w", m, err)
	}
	return nil
}

// ReadMessage reads one frame; io.EOF means the stream ended between
// frames.
func ReadMessage(r io.Reader) (Message, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	size := binary.BigEndian.Uint32(n[:])
	if size == 0 || size > maxFrame {
		return nil, fmt.Errorf("frame of %d bytes", size)
	}
	body := make([]byte, size)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading a frame: %w", err)
	}
	return DecodeMessage(body)
}
