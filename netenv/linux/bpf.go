package linux

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
	"github.com/cilium/ebpf/link"
	"github.com/cilium/ebpf/ringbuf"
)

// The state source of choice: two small BPF programs on the raw
// tracepoints tcp_probe and tcp_cong_state_set
// (Documentation/bpf/, BPF_PROG_TYPE_RAW_TRACEPOINT) read the sender
// socket's snd_cwnd, snd_ssthresh and srtt_us (at a probe) or prior_cwnd
// (at a change of ca_state) directly from struct tcp_sock, at the moment
// the tracepoint fires, and pass them with bpf_ktime_get_ns
// (CLOCK_MONOTONIC, the emulator's clock) through a ring buffer. Unlike
// the tracefs text events (trace.go, the fallback), a change of ca_state
// then carries cwnd and ssthresh as they are inside tcp_set_ca_state,
// before the same ACK's congestion avoidance, which is when the native
// sender records a change; and prior_cwnd is the kernel's own. The
// programs are hand-assembled (no compiler needed) and filter on the run's
// socket cookies (a hash map), so another run's or the host's sockets
// never reach the ring. Everything is held by descriptors of this process:
// the kernel detaches and frees it when the process ends.

// Record kinds in the ring.
const (
	bpfKindProbe = 1
	bpfKindState = 2
)

// bpfRecordSize is one ring record: cookie u64, cwnd u32, ssthresh u32,
// aux u32 (srtt_us at a probe, prior_cwnd at a state change), kind<<8 |
// state u32, ktime u64, icsk_rto u32 (jiffies), packets_out, sacked_out,
// lost_out, retrans_out and delivered (u32 each), 8 zero bytes.
const bpfRecordSize = 64

// bpfFlight are the record's counters after icsk_rto, in order: what
// tcp_packets_in_flight (include/net/tcp.h) and tcpi_delivered are made
// of, read at the tracepoint with the window rather than from TCP_INFO
// when the record is processed, which a loaded machine delays by tens of
// milliseconds (a kernel Reno cwnd-validation hit of 1 in 2,000 held in 0
// of 10 runs).
var bpfFlight = []string{"packets_out", "sacked_out", "lost_out", "retrans_out", "delivered"}

// bpfOffsets are byte offsets into struct tcp_sock, from the kernel's BTF,
// and the kernel's HZ (0 when unknown).
type bpfOffsets struct {
	cookie, cwnd, ssthresh, srtt, prior, rto int32
	flight                                   [5]int32 // of bpfFlight
	hz                                       int64
}

// kernelOffsets reads the offsets the programs need from the running
// kernel's BTF (/sys/kernel/btf/vmlinux).
func kernelOffsets() (bpfOffsets, error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return bpfOffsets{}, fmt.Errorf("kernel BTF: %w", err)
	}
	find := func(structName string, members ...string) (map[string]int32, error) {
		var st *btf.Struct
		if err := spec.TypeByName(structName, &st); err != nil {
			return nil, fmt.Errorf("struct %s: %w", structName, err)
		}
		out := map[string]int32{}
		var walk func(ms []btf.Member, base btf.Bits, depth int)
		walk = func(ms []btf.Member, base btf.Bits, depth int) {
			for _, m := range ms {
				if m.Name == "" && depth < 8 {
					switch t := btf.UnderlyingType(m.Type).(type) {
					case *btf.Struct:
						walk(t.Members, base+m.Offset, depth+1)
					case *btf.Union:
						walk(t.Members, base+m.Offset, depth+1)
					}
					continue
				}
				for _, w := range members {
					if _, done := out[w]; m.Name == w && !done {
						out[w] = int32((base + m.Offset) / 8)
					}
				}
			}
		}
		walk(st.Members, 0, 0)
		for _, w := range members {
			if _, ok := out[w]; !ok {
				return nil, fmt.Errorf("struct %s has no %s", structName, w)
			}
		}
		return out, nil
	}
	tp, err := find("tcp_sock", append([]string{"snd_cwnd", "snd_ssthresh", "srtt_us", "prior_cwnd"}, bpfFlight...)...)
	if err != nil {
		return bpfOffsets{}, err
	}
	// struct tcp_sock begins with inet_connection_sock, inet_sock, sock
	// and sock_common, each the first member of the next, so an offset
	// into sock_common is one into tcp_sock.
	sc, err := find("sock_common", "skc_cookie")
	if err != nil {
		return bpfOffsets{}, err
	}
	// icsk_rto is in inet_connection_sock, tcp_sock's first member.
	icsk, err := find("inet_connection_sock", "icsk_rto")
	if err != nil {
		return bpfOffsets{}, err
	}
	off := bpfOffsets{cookie: sc["skc_cookie"], cwnd: tp["snd_cwnd"], ssthresh: tp["snd_ssthresh"],
		srtt: tp["srtt_us"], prior: tp["prior_cwnd"], rto: icsk["icsk_rto"], hz: kernelHZ()}
	for i, name := range bpfFlight {
		off.flight[i] = tp[name]
	}
	return off, nil
}

// kernelHZ is the running kernel's CONFIG_HZ, from /proc/config.gz or
// /boot/config-RELEASE, 0 if neither says: icsk_rto counts jiffies.
func kernelHZ() int64 {
	var uts unix.Utsname
	_ = unix.Uname(&uts)
	for _, path := range []string{"/proc/config.gz", "/boot/config-" + unix.ByteSliceToString(uts.Release[:])} {
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		var r io.Reader = f
		if strings.HasSuffix(path, ".gz") {
			if r, err = gzip.NewReader(f); err != nil {
				f.Close()
				continue
			}
		}
		hz := configHZ(r)
		f.Close()
		if hz > 0 {
			return hz
		}
	}
	return 0
}

// configHZ reads CONFIG_HZ=N from a kernel configuration.
func configHZ(r io.Reader) int64 {
	sc := bufio.NewScanner(io.LimitReader(r, 16<<20))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CONFIG_HZ="); ok {
			if hz, err := strconv.ParseInt(v, 10, 64); err == nil && hz > 0 {
				return hz
			}
		}
	}
	return 0
}

// bpfSource is one run's programs, maps and ring reader.
type bpfSource struct {
	cookies *ebpf.Map
	ring    *ebpf.Map
	progs   []*ebpf.Program
	links   []link.Link
	rd      *ringbuf.Reader
	hz      int64 // the kernel's HZ: icsk_rto's unit; 0 leaves rto to TCP_INFO
	// stopping asks read to return once the ring has been empty for a
	// poll interval (the reader's deadline cannot be moved while a read
	// waits: it takes the lock the read holds).
	stopping atomic.Bool
}

// bpfPoll is how long read waits on an empty ring before it checks
// whether to stop.
const bpfPoll = 20 * time.Millisecond

// newBPFSource loads and attaches the programs for the given cookies.
func newBPFSource(off bpfOffsets, cookies []uint64) (*bpfSource, error) {
	s := &bpfSource{hz: off.hz}
	var err error
	s.cookies, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.Hash, KeySize: 8, ValueSize: 1, MaxEntries: uint32(max(len(cookies), 1))})
	if err != nil {
		return nil, fmt.Errorf("BPF cookie map: %w", err)
	}
	for _, c := range cookies {
		if err := s.cookies.Put(c, uint8(1)); err != nil {
			s.close()
			return nil, fmt.Errorf("BPF cookie map: %w", err)
		}
	}
	// 8 MB: ~260,000 records, far more than a run makes between reads.
	s.ring, err = ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: 8 << 20})
	if err != nil {
		s.close()
		return nil, fmt.Errorf("BPF ring buffer: %w", err)
	}
	for _, tp := range []struct {
		name, prog string // the tracepoint; the program's name (≤ 15 bytes)
		kind       int64
	}{{"tcp_probe", "actfuzz_probe", bpfKindProbe}, {"tcp_cong_state_set", "actfuzz_castate", bpfKindState}} {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Name: tp.prog, Type: ebpf.RawTracepoint, License: "GPL",
			Instructions: bpfProgram(off, tp.kind, s.cookies.FD(), s.ring.FD()),
		})
		if err != nil {
			s.close()
			return nil, fmt.Errorf("BPF program for %s: %w", tp.name, err)
		}
		s.progs = append(s.progs, prog)
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: tp.name, Program: prog})
		if err != nil {
			s.close()
			return nil, fmt.Errorf("BPF attach to %s: %w", tp.name, err)
		}
		s.links = append(s.links, l)
	}
	s.rd, err = ringbuf.NewReader(s.ring)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("BPF ring reader: %w", err)
	}
	return s, nil
}

// bpfProgram assembles the program of one tracepoint. Both tracepoints'
// first argument is the socket (include/trace/events/tcp.h); the second of
// tcp_cong_state_set is the new ca_state. Stack: fp-64 the record (its
// layout: bpfRecordSize).
func bpfProgram(off bpfOffsets, kind int64, cookiesFD, ringFD int) asm.Instructions {
	read := func(dst int16, size int32, field int32) asm.Instructions {
		return asm.Instructions{
			asm.Mov.Reg(asm.R1, asm.RFP),
			asm.Add.Imm(asm.R1, int32(dst)),
			asm.Mov.Imm(asm.R2, size),
			asm.Mov.Reg(asm.R3, asm.R7),
			asm.Add.Imm(asm.R3, field),
			asm.FnProbeReadKernel.Call(),
		}
	}
	aux := off.srtt
	if kind == bpfKindState {
		aux = off.prior
	}
	insns := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, 0, asm.DWord), // sk
	}
	insns = append(insns, read(-64, 8, off.cookie)...)
	insns = append(insns,
		asm.LoadMapPtr(asm.R1, cookiesFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -64),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, "out"), // not one of the run's sockets
	)
	insns = append(insns, read(-56, 4, off.cwnd)...)
	insns = append(insns, read(-52, 4, off.ssthresh)...)
	insns = append(insns, read(-48, 4, aux)...)
	insns = append(insns, read(-32, 4, off.rto)...)
	for i, field := range off.flight {
		insns = append(insns, read(int16(-28+4*i), 4, field)...)
	}
	insns = append(insns, asm.StoreImm(asm.RFP, -8, 0, asm.DWord))
	if kind == bpfKindState {
		insns = append(insns,
			asm.LoadMem(asm.R8, asm.R6, 8, asm.DWord), // ca_state
			asm.And.Imm(asm.R8, 0xff),
			asm.Or.Imm(asm.R8, int32(kind<<8)),
			asm.StoreMem(asm.RFP, -44, asm.R8, asm.Word),
		)
	} else {
		insns = append(insns, asm.StoreImm(asm.RFP, -44, kind<<8, asm.Word))
	}
	insns = append(insns,
		asm.FnKtimeGetNs.Call(),
		asm.StoreMem(asm.RFP, -40, asm.R0, asm.DWord),
		asm.LoadMapPtr(asm.R1, ringFD),
		asm.Mov.Reg(asm.R2, asm.RFP),
		asm.Add.Imm(asm.R2, -64),
		asm.Mov.Imm(asm.R3, bpfRecordSize),
		asm.Mov.Imm(asm.R4, 0),
		asm.FnRingbufOutput.Call(),
		asm.Mov.Imm(asm.R0, 0).WithSymbol("out"),
		asm.Return(),
	)
	return insns
}

// read delivers the ring's records as events until the reader's deadline
// passes or it is closed.
func (s *bpfSource) read(t0 int64, on func(ev *event)) error {
	var rec ringbuf.Record
	for {
		s.rd.SetDeadline(time.Now().Add(bpfPoll))
		if err := s.rd.ReadInto(&rec); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if s.stopping.Load() {
					return nil // drained
				}
				continue
			}
			if errors.Is(err, ringbuf.ErrClosed) {
				return nil
			}
			return fmt.Errorf("BPF ring: %w", err)
		}
		b := rec.RawSample
		if len(b) < bpfRecordSize {
			continue
		}
		le := binary.LittleEndian
		ev := event{
			cookie: le.Uint64(b[0:]),
			cwnd:   le.Uint32(b[8:]),
			ssth:   le.Uint32(b[12:]),
			at:     time.Duration(int64(le.Uint64(b[24:])) - t0),
		}
		aux := le.Uint32(b[16:])
		ks := le.Uint32(b[20:])
		if s.hz > 0 {
			// icsk_rto as the kernel held it when the tracepoint
			// fired: TCP_INFO, read later, may already show the
			// doubling that follows an RTO's tcp_enter_loss
			// (net/ipv4/tcp_timer.c tcp_retransmit_timer).
			ev.rto = time.Duration(int64(le.Uint32(b[32:]))) * time.Second / time.Duration(s.hz)
			ev.hasRTO = true
		}
		// tcp_packets_in_flight: packets_out − (sacked_out + lost_out)
		// + retrans_out, as TCP_INFO computes it.
		inflight := int64(le.Uint32(b[36:])) - int64(le.Uint32(b[40:])) - int64(le.Uint32(b[44:])) + int64(le.Uint32(b[48:]))
		ev.inFlight, ev.delivered, ev.hasFlight = uint32(max(inflight, 0)), uint64(le.Uint32(b[52:])), true
		switch ks >> 8 {
		case bpfKindProbe:
			ev.probe = true
			ev.srtt = time.Duration(aux>>3) * time.Microsecond // srtt_us is 8× srtt (tcp_rtt_estimator)
		case bpfKindState:
			ev.state = uint8(ks)
			ev.prior, ev.hasWindow = aux, true
		default:
			continue
		}
		on(&ev)
	}
}

// stop makes read return once it has read everything in the ring.
func (s *bpfSource) stop() { s.stopping.Store(true) }

func (s *bpfSource) close() {
	if s.rd != nil {
		_ = s.rd.Close()
	}
	for _, l := range s.links {
		_ = l.Close()
	}
	for _, p := range s.progs {
		_ = p.Close()
	}
	if s.ring != nil {
		_ = s.ring.Close()
	}
	if s.cookies != nil {
		_ = s.cookies.Close()
	}
}
