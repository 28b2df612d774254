// actfuzz-ns3: the ns-3 subject's driver.
//
// A persistent process that runs many simulations of ns-3's own TCP
// models, one per request read from stdin, and streams each sender's state
// trace to stdout. It is actfuzz's own code: it uses ns-3's public API
// (plus read access to TcpSocketBase's protected state through a derived
// class, see Peek) and links against Debian's libns3-dev 3.37. Build it
// with `make ns3`.
//
// Protocol (text, one record a line, fields separated by one space; the
// Go side is netenv/ns3/driver.go, documented in netenv/ns3/doc.go):
//
//   driver → Go, once at start:
//     HELLO actfuzz-ns3 <protocol version> <ns-3 version> <model> <model> ...
//   Go → driver, one request:
//     RUN <id> <seed> <sack 0|1> <maxtime_ns> <maxevents> <nflows> <nphases>
//     FLOW <model> <bytes>                                    (nflows lines)
//     PHASE <until_ns> <key>=<value> ...                     (nphases lines)
//       keys, each once: loss bw_bps delay_ns qshape qscale_ms app_bps buffer
//                        aqm (droptail|red|codel, the same in every phase)
//                        codel_target_ns codel_interval_ns ecn (0|1)
//   driver → Go, the answer:
//     R <t_ns> <flow> <reason> <cwnd_B> <ssthresh_B> <srtt_ns> <rttvar_ns> <rto_ns>
//       <ca_state> <prev_ca_state> <prior_cwnd_B> <inflight_B> <delivered_B> <pacing_bps>
//     F <flow> <segments> <retransmits> <timeouts> <recoveries> <delivered_bytes>
//       <done 0|1> <done_at_ns> <cwnd_B> <ssthresh_B> <srtt_ns> <rttvar_ns> <ca_state>
//     DONE <id> <sim_time_ns> <events> <cap: - | time | events> <drops> <losses>
//       <aqm_drops> <marks>
//   or, for a request it cannot run:
//     ERR <id> <message>
//   Go → driver: QUIT ends the process.
//
// Units: bytes (_B), nanoseconds (_ns), bit/s (_bps). Floats are printed by
// Go with the shortest round-trip representation and read with strtod.

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <charconv>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <tuple>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr int kProtocolVersion = 4;
constexpr uint32_t kMSS = 1448; // netenv/tcp.DefaultMSS
// kSndBuf is the send buffer: Linux's tcp_wmem[2] (4 MB, netenv/tcp's
// DefaultSndBuf) rounded up to whole segments, as the native sender's
// limit (a write adds a whole segment while the buffer is below 4 MB).
constexpr uint64_t kSndBuf = (((4u << 20) + kMSS - 1) / kMSS) * kMSS;
constexpr uint16_t kBasePort = 5000;
// Random-variable streams used explicitly, so that a persistent driver gives
// the same numbers for the same seed however many runs it has done.
constexpr int64_t kStreamLoss = 1;
constexpr int64_t kStreamQueue = 2;
constexpr int64_t kStreamAqm = 3;
constexpr int64_t kStreamModel = 16; // + flow index

// The models offered, in the order of the issue. "TcpWestwoodPlus" is
// TcpWestwood with ProtocolType=WestwoodPlus.
const char* const kModels[] = {
    "TcpNewReno", "TcpLinuxReno", "TcpCubic",       "TcpBbr",      "TcpBic",
    "TcpDctcp",   "TcpHighSpeed", "TcpHtcp",        "TcpHybla",    "TcpIllinois",
    "TcpLedbat",  "TcpLp",        "TcpScalable",    "TcpVegas",    "TcpVeno",
    "TcpWestwood", "TcpWestwoodPlus", "TcpYeah",
};

// Peek reads TcpSocketBase's protected members through pointers to members
// named in a derived class (a standard C++ access rule); it is never
// instantiated.
struct Peek : public TcpSocketBase
{
    static Ptr<TcpSocketState> Tcb(TcpSocketBase* s)
    {
        return s->*(&Peek::m_tcb);
    }

    static Ptr<RttEstimator> Rtt(TcpSocketBase* s)
    {
        return s->*(&Peek::m_rtt);
    }

    static Ptr<TcpRateOps> Rate(TcpSocketBase* s)
    {
        return s->*(&Peek::m_rateOps);
    }

    static Time Rto(TcpSocketBase* s)
    {
        return (s->*(&Peek::m_rto)).Get();
    }

    static EventId RetxEvent(TcpSocketBase* s)
    {
        return s->*(&Peek::m_retxEvent);
    }
};

// --- output -------------------------------------------------------------

std::string g_out;

void
Flush()
{
    if (!g_out.empty())
    {
        fwrite(g_out.data(), 1, g_out.size(), stdout);
        g_out.clear();
    }
    fflush(stdout);
}

inline void
PutU(uint64_t v)
{
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    g_out.push_back(' ');
    g_out.append(buf, r.ptr);
}

inline void
PutI(int64_t v)
{
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    g_out.push_back(' ');
    g_out.append(buf, r.ptr);
}

inline void
EndLine()
{
    g_out.push_back('\n');
    if (g_out.size() > (1 << 18))
    {
        fwrite(g_out.data(), 1, g_out.size(), stdout);
        g_out.clear();
    }
}

// --- the bottleneck -----------------------------------------------------

// LimitQueue is a drop-tail queue whose limit (in packets) can shrink below
// its occupancy: queued packets stay, arrivals are dropped until it drains,
// as netenv's link does. The base class's own limit is set huge, so that
// ns-3's flow control never stops the device queue.
class LimitQueue : public DropTailQueue<Packet>
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("actfuzz::LimitQueue")
                                .SetParent<DropTailQueue<Packet>>()
                                .SetGroupName("actfuzz")
                                .AddConstructor<LimitQueue>();
        return tid;
    }

    uint32_t limit = 100;
    uint64_t drops = 0;

    bool Enqueue(Ptr<Packet> item) override
    {
        if (GetNPackets() >= limit)
        {
            drops++;
            DropBeforeEnqueue(item);
            return false;
        }
        return DropTailQueue<Packet>::Enqueue(item);
    }
};

// ActChannel is a point-to-point channel with netenv's per-direction model:
// on the forward (data) direction, random loss of data packets and a
// per-packet Gamma queuing delay on top of the propagation delay (packets
// may be reordered); the reverse direction has the propagation delay only.
class ActChannel : public PointToPointChannel
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("actfuzz::ActChannel")
                                .SetParent<PointToPointChannel>()
                                .SetGroupName("actfuzz")
                                .AddConstructor<ActChannel>();
        return tid;
    }

    Ptr<PointToPointNetDevice> fwdSrc, fwdDst;
    Time prop;
    double loss = 0;
    double qshape = 0, qscale = 0; // scale in ms
    Ptr<UniformRandomVariable> lossRv;
    Ptr<GammaRandomVariable> gammaRv;
    uint64_t losses = 0;

    bool TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src, Time txTime) override
    {
        bool fwd = src == fwdSrc;
        Ptr<PointToPointNetDevice> dst = fwd ? fwdDst : fwdSrc;
        Time d = txTime + prop;
        if (fwd)
        {
            if (loss > 0 && HasPayload(p) && lossRv->GetValue() < loss)
            {
                losses++;
                return true; // lost after serialization: the link was busy
            }
            if (qshape > 0 && qscale > 0)
            {
                double q = gammaRv->GetValue(qshape, qscale) * 1e6; // ns
                if (q > 1e12)
                {
                    q = 1e12; // netenv.MaxQMean
                }
                d += NanoSeconds(static_cast<int64_t>(q));
            }
        }
        Simulator::ScheduleWithContext(dst->GetNode()->GetId(),
                                       d,
                                       &PointToPointNetDevice::Receive,
                                       dst,
                                       p->Copy());
        return true;
    }

    // HasPayload says whether a PPP/IPv4/TCP frame carries data: loss
    // applies to data packets only (SYNs and pure ACKs are never lost).
    static bool HasPayload(Ptr<const Packet> p)
    {
        uint8_t b[64];
        uint32_t n = p->CopyData(b, sizeof b);
        if (n < 2 + 20 + 20)
        {
            return false;
        }
        uint32_t ihl = (b[2] & 0x0f) * 4;
        if (2 + ihl + 13 > n)
        {
            return false;
        }
        uint32_t doff = (b[2 + ihl + 12] >> 4) * 4;
        return p->GetSize() > 2 + ihl + doff;
    }
};

// --- one run ------------------------------------------------------------

struct Phase
{
    int64_t until = 0; // ns
    double loss = 0;
    uint64_t bw = 0;    // bit/s
    int64_t delay = 0;  // ns
    double qshape = 0;
    double qscale = 0;  // ms
    uint64_t app = 0;   // bit/s, 0: unlimited
    uint32_t buffer = 0;
    int aqm = 0;               // 0 droptail, 1 red, 2 codel (kAqmNames)
    int64_t codelTarget = 0;   // ns
    int64_t codelInterval = 0; // ns
    bool ecn = false;
};

const char* const kAqmNames[] = {"droptail", "red", "codel"};

struct Request
{
    std::string id;
    uint64_t seed = 0;
    bool sack = true;
    int64_t maxTime = 0;
    uint64_t maxEvents = 0;
    std::vector<std::string> models;
    std::vector<uint64_t> bytes;
    std::vector<Phase> phases;
};

struct Flow
{
    int idx = 0;
    uint64_t bytes = 0;
    Ptr<TcpSocketBase> sock;
    // application
    uint64_t appRate = 0; // bit/s, 0: unlimited
    uint64_t appBase = 0;
    int64_t appSince = 0;
    uint64_t handed = 0; // bytes given to the socket
    bool blocked = false; // a rate-limited application waits for send buffer space
    EventId appEv;
    bool connected = false;
    // state
    int prevCa = 0;
    uint32_t priorCwnd = 0;
    // entryPending: the state became recovery and the record that enters
    // it waits for the reduced ssthresh (see OnCongState).
    bool entryPending = false;
    EventId retx;
    uint64_t countedRetxUid = 0;
    bool haveHighTx = false;
    SequenceNumber32 highTx;
    // stats
    uint64_t segments = 0, retransmits = 0, timeouts = 0, recoveries = 0;
    uint64_t received = 0;
    bool done = false;
    int64_t doneAt = 0;
};

struct Run
{
    const Request* req = nullptr;
    std::vector<Flow> flows;
    Ptr<ActChannel> channel;
    Ptr<PointToPointNetDevice> fwdDev, revDev;
    Ptr<LimitQueue> fwdQ, revQ;
    // The forward queue disc (aqm red or codel; null for drop-tail) and
    // the limit its buffer shrinks towards (see ShrinkDisc).
    Ptr<QueueDisc> disc;
    uint32_t discLimit = 0;
    size_t phase = 0;
    int remaining = 0;
    uint64_t eventBase = 0;
    const char* cap = "-";
};

Run* g_run = nullptr;

uint64_t
AppWritten(const Flow& f, int64_t now)
{
    if (f.appRate == 0)
    {
        return f.bytes;
    }
    if (f.blocked)
    {
        return f.appBase;
    }
    unsigned __int128 w = static_cast<unsigned __int128>(f.appRate) *
                          static_cast<uint64_t>(now - f.appSince) / 8000000000ULL;
    unsigned __int128 total = f.appBase + w;
    return total >= f.bytes ? f.bytes : static_cast<uint64_t>(total);
}

int64_t
AppTimeFor(const Flow& f, uint64_t n)
{
    unsigned __int128 need = static_cast<unsigned __int128>(n - f.appBase) * 8000000000ULL;
    unsigned __int128 q = (need + f.appRate - 1) / f.appRate;
    if (q > static_cast<unsigned __int128>(INT64_MAX / 2))
    {
        return INT64_MAX / 2;
    }
    return f.appSince + static_cast<int64_t>(q);
}

void Pump(Flow* f);

void
AppTimer(Flow* f)
{
    Pump(f);
}

// Pump hands the socket what the application has written by now, in whole
// segments except the tail, and arms the application timer. The send
// buffer is bounded (kSndBuf): a rate-limited application that finds it
// full blocks, producing nothing, until an ACK frees a segment's room
// (OnSendSpace), then goes on at its rate, as the native sender's
// application (netenv/tcp/app.go).
void
Pump(Flow* f)
{
    if (!f->connected || f->done)
    {
        return;
    }
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (f->blocked)
    {
        if (f->sock->GetTxAvailable() < kMSS)
        {
            return;
        }
        f->blocked = false;
        f->appSince = now;
    }
    uint64_t written = AppWritten(*f, now);
    bool full = false; // the send buffer stopped the application
    while (f->handed < written)
    {
        uint64_t n = written - f->handed;
        if (written < f->bytes)
        {
            n -= n % kMSS; // whole segments until the tail
        }
        uint64_t avail = f->sock->GetTxAvailable();
        if (f->handed + n < f->bytes)
        {
            avail -= avail % kMSS; // a full buffer takes no runt
        }
        if (avail < n)
        {
            full = true;
            n = avail;
        }
        n = std::min<uint64_t>(n, 1 << 20);
        if (n == 0)
        {
            break;
        }
        if (f->sock->Send(Create<Packet>(static_cast<uint32_t>(n)), 0) < 0)
        {
            full = true;
            break;
        }
        f->handed += n;
    }
    f->appEv.Cancel();
    if (f->appRate > 0 && full)
    {
        // Blocked on the full send buffer: what it wrote is what fitted.
        f->blocked = true;
        f->appBase = f->handed;
        f->appSince = now;
        return;
    }
    if (f->appRate > 0 && written < f->bytes)
    {
        uint64_t next = std::min<uint64_t>(written - written % kMSS + kMSS, f->bytes);
        if (next <= written)
        {
            next = std::min<uint64_t>(written + kMSS, f->bytes);
        }
        int64_t at = AppTimeFor(*f, next);
        f->appEv = Simulator::Schedule(NanoSeconds(std::max<int64_t>(at - now, 0)), &AppTimer, f);
    }
}

enum Reason
{
    kReasonAck = 0,
    kReasonState = 1,
    kReasonRTO = 2,
};

// EmitWith emits a record of the socket's state, with the congestion state
// ca and ssthresh in bytes as given when they are not negative: a traced
// value's callback runs before the new value is stored (TracedValue::Set),
// so a record emitted from one passes the new value.
void
EmitWith(Flow* f, int reason, int ca, int64_t ssthresh)
{
    TcpSocketBase* s = PeekPointer(f->sock);
    Ptr<TcpSocketState> tcb = Peek::Tcb(s);
    Ptr<RttEstimator> rtt = Peek::Rtt(s);
    bool sampled = rtt->GetNSamples() > 0;
    g_out.push_back('R');
    PutI(Simulator::Now().GetNanoSeconds());
    PutU(f->idx);
    PutU(reason);
    PutU(tcb->m_cWnd.Get());
    PutU(ssthresh >= 0 ? static_cast<uint64_t>(ssthresh) : tcb->m_ssThresh.Get());
    PutI(sampled ? rtt->GetEstimate().GetNanoSeconds() : 0);
    PutI(sampled ? rtt->GetVariation().GetNanoSeconds() : 0);
    PutI(Peek::Rto(s).GetNanoSeconds());
    PutU(static_cast<uint64_t>(ca >= 0 ? ca : static_cast<int>(tcb->m_congState.Get())));
    PutU(f->prevCa);
    PutU(f->priorCwnd);
    PutU(s->GetTxBuffer()->BytesInFlight());
    PutU(Peek::Rate(s)->GetConnectionRate().m_delivered);
    PutU(tcb->m_pacing ? tcb->m_pacingRate.Get().GetBitRate() : 0);
    EndLine();
}

// Emit emits a record of the socket's state as it is.
void
Emit(Flow* f, int reason)
{
    EmitWith(f, reason, -1, -1);
}

// PollRetx notices that the retransmission timer fired (it expired
// without being cancelled), counts a timeout and emits an RTO record.
void
PollRetx(Flow* f)
{
    if (f->retx.PeekEventImpl() != nullptr && f->retx.GetUid() != f->countedRetxUid &&
        Simulator::IsExpired(f->retx) && !f->retx.PeekEventImpl()->IsCancelled())
    {
        f->countedRetxUid = f->retx.GetUid();
        f->timeouts++;
        Simulator::ScheduleNow(&Emit, f, static_cast<int>(kReasonRTO));
    }
    f->retx = Peek::RetxEvent(PeekPointer(f->sock));
}

void EmitEntry(Flow* f);

void
OnTx(Flow* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    EmitEntry(f); // a recovery's retransmission, ssthresh and cwnd unchanged
    PollRetx(f);
    if (p->GetSize() == 0)
    {
        return;
    }
    f->segments++;
    SequenceNumber32 end = h.GetSequenceNumber() + SequenceNumber32(p->GetSize());
    if (f->haveHighTx && h.GetSequenceNumber() < f->highTx)
    {
        f->retransmits++;
    }
    if (!f->haveHighTx || end > f->highTx)
    {
        f->highTx = end;
        f->haveHighTx = true;
    }
}

void
OnRx(Flow* f, Ptr<const Packet>, const TcpHeader& h, Ptr<const TcpSocketBase>)
{
    PollRetx(f);
    if (!f->connected || (h.GetFlags() & TcpHeader::SYN))
    {
        return;
    }
    Simulator::ScheduleNow(&Emit, f, static_cast<int>(kReasonAck));
}

// EmitEntry emits the record that enters a recovery if it is still
// pending: at the end of the ACK, when ssthresh did not change.
void
EmitEntry(Flow* f)
{
    if (f->entryPending)
    {
        f->entryPending = false;
        Emit(f, kReasonState);
    }
}

// OnCongState records a change of congestion state. The record that
// enters a window reduction is emitted at the reduction itself, as the
// native subject emits it, with the reduced ssthresh, the cwnd from before
// it and the flight ssthresh was computed from; the rest of the ACK
// (PRR's cwnd, what the congestion control's PktsAcked does, e.g.
// TcpCubic's HyStart lowering ssthresh again) shows in the ACK's own
// record after it:
//   - CWR: TcpSocketBase::EnterCwr sets ssthresh before the state, so the
//     record is emitted now (with the new state: this callback runs
//     before it is stored);
//   - recovery: TcpSocketBase::EnterRecovery sets the state, then ssthresh
//     = GetSsThresh(tcb, BytesInFlight()), then PRR's cwnd
//     (TcpPrrRecovery::EnterRecovery), then retransmits the head: the
//     record is emitted at the first of these that shows, ssthresh
//     changing (OnSsThresh), cwnd changing (OnCwnd, before PRR's value
//     is stored) or the retransmission (OnTx), and at the end of the ACK
//     if none did;
//   - loss, open, disorder: at the end of the event (TcpSocketBase::
//     ReTxTimeout sets ssthresh, the state and cwnd = 1 segment together).
void
OnCongState(Flow* f, TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    if (to == from)
    {
        return;
    }
    // An entry still pending (a recovery whose ssthresh did not change)
    // is emitted before the next change is recorded.
    EmitEntry(f);
    Ptr<TcpSocketState> tcb = Peek::Tcb(PeekPointer(f->sock));
    if (to == TcpSocketState::CA_RECOVERY || to == TcpSocketState::CA_LOSS ||
        to == TcpSocketState::CA_CWR)
    {
        // Linux's prior_cwnd: the window before the reduction (ns-3 sets
        // the state before it reduces cwnd).
        f->priorCwnd = tcb->m_cWnd.Get();
    }
    if (to == TcpSocketState::CA_RECOVERY)
    {
        f->recoveries++;
    }
    f->prevCa = static_cast<int>(from);
    if (to == TcpSocketState::CA_CWR)
    {
        EmitWith(f, kReasonState, static_cast<int>(to), -1);
        return;
    }
    if (to == TcpSocketState::CA_RECOVERY)
    {
        f->entryPending = true;
        Simulator::ScheduleNow(&EmitEntry, f);
        return;
    }
    Simulator::ScheduleNow(&Emit, f, static_cast<int>(kReasonState));
}

// OnSsThresh emits a pending recovery entry once ssthresh is reduced (the
// trace runs before the new value is stored). OnCwnd emits it when PRR
// sets cwnd and ssthresh kept its value (cwnd is still the old one).
void
OnSsThresh(Flow* f, uint32_t, uint32_t ssthresh)
{
    if (f->entryPending)
    {
        f->entryPending = false;
        EmitWith(f, kReasonState, -1, ssthresh);
    }
}

void
OnCwnd(Flow* f, uint32_t, uint32_t)
{
    EmitEntry(f);
}

void
StopNow()
{
    Simulator::Stop();
}

void
OnHighestRxAck(Flow* f, SequenceNumber32, SequenceNumber32 ack)
{
    if (f->done || ack.GetValue() < f->bytes + 1) // data starts at ISN 0 + 1
    {
        return;
    }
    f->done = true;
    f->doneAt = Simulator::Now().GetNanoSeconds();
    f->appEv.Cancel();
    if (--g_run->remaining == 0)
    {
        // After the records of this ACK (scheduled now, earlier).
        Simulator::ScheduleNow(&StopNow);
    }
}

void
OnConnected(Flow* f, Ptr<Socket>)
{
    f->connected = true;
    Emit(f, kReasonState);
    Pump(f);
}

void
OnConnectFailed(Flow*, Ptr<Socket>)
{
}

void
OnSendSpace(Flow* f, Ptr<Socket>, uint32_t)
{
    Pump(f);
}

void
OnRecv(Flow* f, Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        f->received += p->GetSize();
    }
}

void
OnAccept(Flow* f, Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeBoundCallback(&OnRecv, f));
}

void SetAttr(Ptr<Object> o, const std::string& name, const AttributeValue& v);

// ShrinkDisc sets the queue disc's limit to discLimit, or to its occupancy
// when more packets are queued: a shrunk buffer keeps what it holds and
// drops arrivals until it drains below the new limit, as natively (ns-3
// refuses a limit below the occupancy). Called at every phase switch and
// after every dequeue from the disc.
void
ShrinkDisc(Run* r)
{
    uint32_t n = r->disc->GetNPackets();
    uint32_t lim = std::max(r->discLimit, n);
    if (r->disc->GetMaxSize().GetValue() != lim)
    {
        r->disc->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, lim));
    }
}

void
OnDiscDequeue(Run* r, Ptr<const QueueDiscItem>)
{
    ShrinkDisc(r);
}

void
ApplyPhase(Run* r, const Phase& p, bool first)
{
    r->fwdDev->SetDataRate(DataRate(p.bw));
    r->revDev->SetDataRate(DataRate(p.bw));
    r->channel->prop = NanoSeconds(p.delay);
    r->channel->loss = p.loss;
    r->channel->qshape = p.qshape;
    r->channel->qscale = p.qscale;
    if (r->disc)
    {
        // The disc holds the queue; the device queue holds the one packet
        // waiting behind the one being serialized, so the disc's limit is
        // buffer − 1 and the packets waiting are buffer, as natively.
        r->discLimit = std::max<uint32_t>(p.buffer, 2) - 1;
        ShrinkDisc(r);
        SetAttr(r->disc, "UseEcn", BooleanValue(p.ecn));
        if (p.aqm == 2)
        {
            SetAttr(r->disc, "Target", TimeValue(NanoSeconds(p.codelTarget)));
            SetAttr(r->disc, "Interval", TimeValue(NanoSeconds(p.codelInterval)));
        }
    }
    else
    {
        r->fwdQ->limit = p.buffer;
    }
    r->revQ->limit = std::max<uint32_t>(p.buffer, 1000);
    int64_t now = Simulator::Now().GetNanoSeconds();
    for (auto& f : r->flows)
    {
        if (first)
        {
            f.appBase = 0;
        }
        else if (f.appRate == 0)
        {
            // An unlimited application has written what the send buffer
            // took and waits on it for the rest.
            f.appBase = f.handed;
            f.blocked = f.handed < f.bytes;
        }
        else
        {
            f.appBase = AppWritten(f, now);
        }
        f.appSince = now;
        f.appRate = p.app;
        if (f.connected && !f.done)
        {
            Pump(&f);
        }
    }
}

void
SwitchPhase()
{
    Run* r = g_run;
    r->phase++;
    ApplyPhase(r, r->req->phases[r->phase], false);
    if (r->phase + 1 < r->req->phases.size())
    {
        Simulator::Schedule(NanoSeconds(r->req->phases[r->phase].until) - Simulator::Now(),
                            &SwitchPhase);
    }
}

// Guard enforces the time and event caps; it stops rescheduling itself once
// nothing else is left to simulate.
constexpr int64_t kGuardPeriod = 100000000; // 100 ms

void
Guard()
{
    Run* r = g_run;
    int64_t now = Simulator::Now().GetNanoSeconds();
    if (r->req->maxTime > 0 && now >= r->req->maxTime)
    {
        r->cap = "time";
        Simulator::Stop();
        return;
    }
    if (r->req->maxEvents > 0 && Simulator::GetEventCount() - r->eventBase >= r->req->maxEvents)
    {
        r->cap = "events";
        Simulator::Stop();
        return;
    }
    if (Simulator::IsFinished())
    {
        return;
    }
    int64_t next = now + kGuardPeriod;
    if (r->req->maxTime > 0 && next > r->req->maxTime)
    {
        next = r->req->maxTime;
    }
    Simulator::Schedule(NanoSeconds(next - now), &Guard);
}

bool
LookupModel(const std::string& name, TypeId* tid)
{
    std::string n = name == "TcpWestwoodPlus" ? "TcpWestwood" : name;
    return TypeId::LookupByNameFailSafe("ns3::" + n, tid);
}

void
SetAttr(Ptr<Object> o, const std::string& name, const AttributeValue& v)
{
    if (!o->SetAttributeFailSafe(name, v))
    {
        std::cerr << "actfuzz-ns3: cannot set attribute " << name << std::endl;
        std::abort();
    }
}

void
ConfigureSocket(Ptr<TcpSocketBase> s, const Request& q, uint32_t sndBuf)
{
    // ECN is negotiated for the whole connection when any phase has it on
    // (netenv.UsesECN, RFC 3168 §6.1.1).
    bool ecn = false;
    for (const auto& p : q.phases)
    {
        ecn = ecn || p.ecn;
    }
    SetAttr(s, "UseEcn", EnumValue(ecn ? TcpSocketState::On : TcpSocketState::Off));
    SetAttr(s, "SegmentSize", UintegerValue(kMSS));
    SetAttr(s, "InitialCwnd", UintegerValue(10));
    SetAttr(s, "SndBufSize", UintegerValue(sndBuf));
    SetAttr(s, "RcvBufSize", UintegerValue(1u << 30));
    SetAttr(s, "DelAckTimeout", TimeValue(MilliSeconds(40)));
    SetAttr(s, "DelAckCount", UintegerValue(2));
    SetAttr(s, "DataRetries", UintegerValue(15));
    SetAttr(s, "Sack", BooleanValue(q.sack));
    SetAttr(s, "Timestamp", BooleanValue(true));
    SetAttr(s, "WindowScaling", BooleanValue(true));
    // RTO as Linux computes it (tcp_set_rto: srtt + max(4·mdev, tcp_rto_min)
    // with tcp_rto_min = 200 ms). ns-3 computes max(MinRto, srtt +
    // max(ClockGranularity, 4·rttvar)) (TcpSocketBase::EstimateRtt), so
    // ClockGranularity = 200 ms gives Linux's formula; MinRto = 200 ms then
    // never binds. With ns-3's 1 ms granularity the RTO is ~200 ms below
    // Linux's on long paths and a 40 ms delayed ACK fires it spuriously,
    // which under Karn's rule (no samples until new data is acked) can
    // repeat for the rest of the transfer: a harness bug, not ns-3's.
    SetAttr(s, "MinRto", TimeValue(MilliSeconds(200)));
    SetAttr(s, "ClockGranularity", TimeValue(MilliSeconds(200)));
}

// InstallDisc installs the forward device's root queue disc for aqm red or
// codel (doc.go: "How P is mapped onto ns-3" says why each attribute):
// the device queue then holds one packet and flow control (a
// NetDeviceQueueInterface, as PointToPointHelper would aggregate) makes
// the disc hold the rest. Drop-tail runs install nothing, as before.
void
InstallDisc(Run* r, const Phase& p)
{
    r->fwdQ->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1));
    r->fwdQ->limit = 1;
    Ptr<NetDeviceQueueInterface> ndqi = CreateObject<NetDeviceQueueInterface>();
    ndqi->GetTxQueue(0)->ConnectQueueTraces(r->fwdQ);
    r->fwdDev->AggregateObject(ndqi);

    uint32_t limit = std::max<uint32_t>(p.buffer, 2) - 1;
    ObjectFactory f;
    if (p.aqm == 1)
    {
        f.SetTypeId("ns3::RedQueueDisc");
        f.Set("MinTh", DoubleValue(5));
        f.Set("MaxTh", DoubleValue(15));
        f.Set("QW", DoubleValue(0.002));
        f.Set("LInterm", DoubleValue(50));
        f.Set("Gentle", BooleanValue(true));
        f.Set("Wait", BooleanValue(false)); // Floyd's pa = pb / (1 − count·pb), as natively
        f.Set("UseHardDrop", BooleanValue(true));
        f.Set("MeanPktSize", UintegerValue(kMSS + 52)); // an IP packet of a full segment
        f.Set("LinkBandwidth", DataRateValue(DataRate(p.bw)));
        f.Set("LinkDelay", TimeValue(NanoSeconds(p.delay)));
    }
    else
    {
        f.SetTypeId("ns3::CoDelQueueDisc");
        f.Set("MinBytes", UintegerValue(kMSS + 52)); // one full IP packet
    }
    f.Set("MaxSize", QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, limit)));
    r->disc = f.Create<QueueDisc>();
    if (Ptr<RedQueueDisc> red = DynamicCast<RedQueueDisc>(r->disc))
    {
        red->AssignStreams(kStreamAqm); // RED's drop draws, per seed
    }
    r->disc->TraceConnectWithoutContext("Dequeue", MakeBoundCallback(&OnDiscDequeue, r));
    Ptr<TrafficControlLayer> tc = r->fwdDev->GetNode()->GetObject<TrafficControlLayer>();
    tc->SetRootQueueDiscOnDevice(r->fwdDev, r->disc);
    // The connection starts before Simulator::Run, so the layer must know
    // the device's queue interface and have checked the disc now (what the
    // node's initialization at t = 0 would do).
    tc->Initialize();
}

void
RunOne(const Request& q)
{
    // Seed: the same e gives the same run, in a fresh or a reused driver.
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(q.seed);
    Ipv4AddressGenerator::Reset();

    Run r;
    r.req = &q;
    g_run = &r;
    r.remaining = static_cast<int>(q.models.size());

    Ptr<Node> a = CreateObject<Node>();
    Ptr<Node> b = CreateObject<Node>();
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.Install(a);
    stack.Install(b);

    r.fwdQ = CreateObject<LimitQueue>();
    r.revQ = CreateObject<LimitQueue>();
    for (auto qq : {r.fwdQ, r.revQ})
    {
        qq->SetMaxSize(QueueSize(QueueSizeUnit::PACKETS, 1u << 30));
    }
    r.fwdDev = CreateObject<PointToPointNetDevice>();
    r.revDev = CreateObject<PointToPointNetDevice>();
    r.fwdDev->SetAddress(Mac48Address("00:00:00:00:00:01"));
    r.revDev->SetAddress(Mac48Address("00:00:00:00:00:02"));
    r.fwdDev->SetQueue(r.fwdQ);
    r.revDev->SetQueue(r.revQ);
    a->AddDevice(r.fwdDev);
    b->AddDevice(r.revDev);
    if (q.phases[0].aqm != 0)
    {
        InstallDisc(&r, q.phases[0]);
    }
    r.channel = CreateObject<ActChannel>();
    r.fwdDev->Attach(r.channel);
    r.revDev->Attach(r.channel);
    r.channel->fwdSrc = r.fwdDev;
    r.channel->fwdDst = r.revDev;
    r.channel->lossRv = CreateObject<UniformRandomVariable>();
    r.channel->lossRv->SetStream(kStreamLoss);
    r.channel->gammaRv = CreateObject<GammaRandomVariable>();
    r.channel->gammaRv->SetStream(kStreamQueue);

    // Addresses by hand: no helper, so no default queue disc is installed
    // and the device queue is the only buffer.
    Ipv4Address addrA("10.0.0.1"), addrB("10.0.0.2");
    Ipv4Mask mask("255.255.255.0");
    for (auto [node, dev, addr] : {std::tuple{a, r.fwdDev, addrA}, std::tuple{b, r.revDev, addrB}})
    {
        Ptr<Ipv4> ip = node->GetObject<Ipv4>();
        int32_t ifc = ip->AddInterface(dev);
        ip->AddAddress(ifc, Ipv4InterfaceAddress(addr, mask));
        ip->SetMetric(ifc, 1);
        ip->SetUp(ifc);
    }

    r.flows.resize(q.models.size());
    for (size_t i = 0; i < q.models.size(); i++)
    {
        Flow& f = r.flows[i];
        f.idx = static_cast<int>(i);
        f.bytes = q.bytes[i];
        uint16_t port = static_cast<uint16_t>(kBasePort + i);

        Ptr<TcpSocketBase> l =
            DynamicCast<TcpSocketBase>(Socket::CreateSocket(b, TcpSocketFactory::GetTypeId()));
        ConfigureSocket(l, q, 1 << 20);
        l->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        l->Listen();
        l->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                             MakeBoundCallback(&OnAccept, &f));

        Ptr<TcpSocketBase> s =
            DynamicCast<TcpSocketBase>(Socket::CreateSocket(a, TcpSocketFactory::GetTypeId()));
        uint64_t sndBuf = std::min<uint64_t>(std::max<uint64_t>(f.bytes, kMSS), kSndBuf);
        ConfigureSocket(s, q, static_cast<uint32_t>(sndBuf));
        TypeId tid;
        LookupModel(q.models[i], &tid); // checked when the request was read
        ObjectFactory factory;
        factory.SetTypeId(tid);
        if (q.models[i] == "TcpWestwoodPlus")
        {
            factory.Set("ProtocolType", EnumValue(TcpWestwood::WESTWOODPLUS));
        }
        else if (q.models[i] == "TcpWestwood")
        {
            factory.Set("ProtocolType", EnumValue(TcpWestwood::WESTWOOD));
        }
        Ptr<TcpCongestionOps> cc = factory.Create<TcpCongestionOps>();
        if (Ptr<TcpBbr> bbr = DynamicCast<TcpBbr>(cc))
        {
            bbr->SetStream(kStreamModel + i);
        }
        s->SetCongestionControlAlgorithm(cc);
        f.sock = s;
        s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTx, &f));
        s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnRx, &f));
        s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, &f));
        s->TraceConnectWithoutContext("SlowStartThreshold", MakeBoundCallback(&OnSsThresh, &f));
        s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&OnCwnd, &f));
        s->TraceConnectWithoutContext("HighestRxAck", MakeBoundCallback(&OnHighestRxAck, &f));
        s->SetConnectCallback(MakeBoundCallback(&OnConnected, &f),
                              MakeBoundCallback(&OnConnectFailed, &f));
        s->SetSendCallback(MakeBoundCallback(&OnSendSpace, &f));
        s->Bind();
    }

    // The first environment applies from t = 0, handshake included.
    ApplyPhase(&r, q.phases[0], true);
    for (size_t i = 0; i < r.flows.size(); i++)
    {
        r.flows[i].sock->Connect(InetSocketAddress(addrB, static_cast<uint16_t>(kBasePort + i)));
    }
    if (q.phases.size() > 1)
    {
        Simulator::Schedule(NanoSeconds(q.phases[0].until), &SwitchPhase);
    }
    r.eventBase = Simulator::GetEventCount();
    Simulator::Schedule(NanoSeconds(std::min<int64_t>(kGuardPeriod, q.maxTime > 0 ? q.maxTime : kGuardPeriod)),
                        &Guard);
    Simulator::Run();

    int64_t end = Simulator::Now().GetNanoSeconds();
    uint64_t events = Simulator::GetEventCount() - r.eventBase;
    for (auto& f : r.flows)
    {
        TcpSocketBase* s = PeekPointer(f.sock);
        Ptr<TcpSocketState> tcb = Peek::Tcb(s);
        Ptr<RttEstimator> rtt = Peek::Rtt(s);
        bool sampled = rtt->GetNSamples() > 0;
        g_out.push_back('F');
        PutU(f.idx);
        PutU(f.segments);
        PutU(f.retransmits);
        PutU(f.timeouts);
        PutU(f.recoveries);
        PutU(f.received);
        PutU(f.done ? 1 : 0);
        PutI(f.doneAt);
        PutU(tcb->m_cWnd.Get());
        PutU(tcb->m_ssThresh.Get());
        PutI(sampled ? rtt->GetEstimate().GetNanoSeconds() : 0);
        PutI(sampled ? rtt->GetVariation().GetNanoSeconds() : 0);
        PutU(static_cast<uint64_t>(tcb->m_congState.Get()));
        EndLine();
    }
    g_out += "DONE " + q.id;
    PutI(end);
    PutU(events);
    g_out.push_back(' ');
    g_out += r.cap;
    // Drops: the buffer's (device queues, the disc's limit); AQM drops:
    // RED's and CoDel's own decisions; marks: CE marks instead of them.
    uint64_t limitDrops = 0, aqmDrops = 0, marks = 0;
    if (r.disc)
    {
        const QueueDisc::Stats& st = r.disc->GetStats();
        aqmDrops = st.GetNDroppedPackets(RedQueueDisc::UNFORCED_DROP) +
                   st.GetNDroppedPackets(RedQueueDisc::FORCED_DROP) +
                   st.GetNDroppedPackets(CoDelQueueDisc::TARGET_EXCEEDED_DROP);
        limitDrops = st.nTotalDroppedPackets - aqmDrops;
        marks = st.nTotalMarkedPackets;
    }
    PutU(r.fwdQ->drops + r.revQ->drops + limitDrops);
    PutU(r.channel->losses);
    PutU(aqmDrops);
    PutU(marks);
    EndLine();

    for (auto& f : r.flows)
    {
        f.appEv.Cancel();
        f.sock = nullptr;
    }
    r.channel = nullptr;
    r.fwdDev = r.revDev = nullptr;
    r.fwdQ = r.revQ = nullptr;
    r.disc = nullptr;
    Simulator::Destroy();
    g_run = nullptr;
    Flush();
}

// --- request parsing ----------------------------------------------------

bool
Fail(const std::string& id, const std::string& msg)
{
    g_out += "ERR " + id + " " + msg + "\n";
    Flush();
    return false;
}

// ReadPhaseParams reads a PHASE line's key=value pairs: every key of
// kPhaseKeys exactly once, in any order, nothing else. The Go side sends
// one pair per parameter of P that this subject expresses (the parameter
// table's rows that netenv/ns3's mapping names), so a parameter added
// there without a meaning here is an error, never silently ignored.
bool
ReadPhaseParams(std::istringstream& in, Phase* p, std::string* why)
{
    static const char* const kPhaseKeys[] = {"loss",      "bw_bps",          "delay_ns",
                                             "qshape",    "qscale_ms",       "app_bps",
                                             "buffer",    "aqm",             "codel_target_ns",
                                             "codel_interval_ns", "ecn"};
    constexpr size_t kNumKeys = sizeof kPhaseKeys / sizeof kPhaseKeys[0];
    bool seen[kNumKeys] = {};
    std::string tok;
    while (in >> tok)
    {
        size_t eq = tok.find('=');
        std::string key = tok.substr(0, eq);
        size_t k = 0;
        while (k < kNumKeys && key != kPhaseKeys[k])
        {
            k++;
        }
        if (eq == std::string::npos || k == kNumKeys)
        {
            *why = "unknown PHASE parameter " + key;
            return false;
        }
        if (seen[k])
        {
            *why = "PHASE parameter " + key + " given twice";
            return false;
        }
        seen[k] = true;
        std::istringstream v(tok.substr(eq + 1));
        bool good = false;
        switch (k)
        {
        case 0:
            good = static_cast<bool>(v >> p->loss);
            break;
        case 1:
            good = static_cast<bool>(v >> p->bw);
            break;
        case 2:
            good = static_cast<bool>(v >> p->delay);
            break;
        case 3:
            good = static_cast<bool>(v >> p->qshape);
            break;
        case 4:
            good = static_cast<bool>(v >> p->qscale);
            break;
        case 5:
            good = static_cast<bool>(v >> p->app);
            break;
        case 6:
            good = static_cast<bool>(v >> p->buffer);
            break;
        case 7: {
            std::string name;
            good = static_cast<bool>(v >> name);
            p->aqm = -1;
            for (int a = 0; a < 3; a++)
            {
                if (name == kAqmNames[a])
                {
                    p->aqm = a;
                }
            }
            good = good && p->aqm >= 0;
            break;
        }
        case 8:
            good = static_cast<bool>(v >> p->codelTarget) && p->codelTarget > 0;
            break;
        case 9:
            good = static_cast<bool>(v >> p->codelInterval) && p->codelInterval > 0;
            break;
        case 10: {
            int e = -1;
            good = static_cast<bool>(v >> e) && (e == 0 || e == 1);
            p->ecn = e == 1;
            break;
        }
        }
        if (!good || !v.eof())
        {
            *why = "PHASE parameter " + key + ": malformed value";
            return false;
        }
    }
    for (size_t k = 0; k < kNumKeys; k++)
    {
        if (!seen[k])
        {
            *why = std::string("PHASE lacks parameter ") + kPhaseKeys[k];
            return false;
        }
    }
    return true;
}

bool
ReadRequest(std::istringstream& head, Request* q)
{
    size_t nflows = 0, nphases = 0;
    int sack = 1;
    if (!(head >> q->id >> q->seed >> sack >> q->maxTime >> q->maxEvents >> nflows >> nphases))
    {
        return Fail(q->id.empty() ? "?" : q->id, "malformed RUN line");
    }
    q->sack = sack != 0;
    std::string line;
    bool ok = true;
    std::string why;
    for (size_t i = 0; i < nflows + nphases; i++)
    {
        if (!std::getline(std::cin, line))
        {
            std::exit(0);
        }
        std::istringstream in(line);
        std::string kind;
        in >> kind;
        if (i < nflows)
        {
            std::string model;
            uint64_t bytes = 0;
            TypeId tid;
            if (kind != "FLOW" || !(in >> model >> bytes))
            {
                ok = false, why = "malformed FLOW line";
            }
            else
            {
                // Only the models of kModels: in 3.37 TcpCubic's TypeId names
                // TcpSocketBase as its parent, so a TcpCongestionOps check
                // would reject it; kModels is the allow-list instead.
                bool known = false;
                for (const char* m : kModels)
                {
                    known = known || model == m;
                }
                if (!known || !LookupModel(model, &tid))
                {
                    ok = false, why = "unknown model " + model;
                }
            }
            if (bytes == 0 && ok)
            {
                ok = false, why = "bytes must be > 0";
            }
            q->models.push_back(model);
            q->bytes.push_back(bytes);
        }
        else
        {
            Phase p;
            if (kind != "PHASE" || !(in >> p.until))
            {
                ok = false, why = "malformed PHASE line";
            }
            else if (!ReadPhaseParams(in, &p, &why))
            {
                ok = false;
            }
            else if (p.bw == 0 || p.buffer == 0)
            {
                ok = false, why = "bandwidth and buffer must be > 0";
            }
            else if (!q->phases.empty() && p.aqm != q->phases[0].aqm)
            {
                // One root queue disc per run: ns-3 cannot swap it and keep
                // the packets it holds.
                ok = false, why = "aqm must be the same in every phase";
            }
            q->phases.push_back(p);
        }
    }
    if (ok && (nflows == 0 || nphases == 0))
    {
        ok = false, why = "need at least one flow and one phase";
    }
    if (!ok)
    {
        return Fail(q->id, why);
    }
    return true;
}

} // namespace

int
main()
{
    std::ios::sync_with_stdio(false);
    static char obuf[1 << 16];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);

    g_out = "HELLO actfuzz-ns3 " + std::to_string(kProtocolVersion) + " 3.37";
    for (const char* m : kModels)
    {
        TypeId tid;
        if (LookupModel(m, &tid))
        {
            g_out += std::string(" ") + m;
        }
    }
    g_out += "\n";
    Flush();

    std::string line;
    while (std::getline(std::cin, line))
    {
        std::istringstream in(line);
        std::string cmd;
        in >> cmd;
        if (cmd == "QUIT")
        {
            break;
        }
        if (cmd == "RUN")
        {
            Request q;
            if (ReadRequest(in, &q))
            {
                RunOne(q);
            }
            continue;
        }
        if (cmd.empty())
        {
            continue;
        }
        Fail("?", "unknown command " + cmd);
    }
    Flush();
    return 0;
}
