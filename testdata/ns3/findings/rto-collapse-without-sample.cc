// ns-3 TcpSocketBase: once the path's RTT grows past the RTO, the sender
// never measures it again, and every new ACK collapses the backed-off RTO
// to the stale estimate: a storm of spurious timeouts.
//
// actfuzz finding (issue 50 item 5, a differential: `actfuzz diff SEED
// --vs ns3` on a two-flow profile-linux campaign showed native srtt
// ≈ 43 s, the delay of a 360-packet standing queue at 0.1 Mbit/s, and
// ns-3's TcpCubic flow at srtt 56 ms, cwnd 1–2 and 342 RTOs;
// docs/bugs/ns3-rto-collapse-without-sample.md). Two things in
// TcpSocketBase make it:
//   - ReTxTimeout clears m_history (the RTT sampling list) and
//     UpdateRttHistory adds no entry for a retransmission, so no ACK of
//     data sent before the timeout yields a sample, even with the
//     timestamp option on, which makes such samples unambiguous
//     (RFC 7323 §4; RFC 6298 §3);
//   - NewAck recomputes m_rto from the unchanged estimate on every ACK of
//     new data: the exponential backoff of RFC 6298 (5.5) is dropped
//     without a new RTT measurement, where RFC 6298 §5 lets the RTO
//     "collapse" back only once one is obtained (Karn's algorithm), and
//     Linux resets its backoff only on a valid RTT sample
//     (tcp_ack_update_rtt).
// New data sent after a timeout would give a sample one RTT later, but
// the collapsed RTO fires first and clears the list again.
//
// A standalone scenario: two nodes, a 10 Mbit/s point-to-point link with
// 50 ms one-way delay and a 100-packet queue; one bulk TCP flow (TcpNewReno, SACK and timestamps
// on: ns-3's defaults). At 5 s the link's one-way delay becomes 1 s (a
// route change; the RTT goes from 0.1 s to 2 s). It prints srtt, the
// RTO count and cwnd every 5 s. Exit status: 1 if, 60 s after the change,
// srtt is still below half the new RTT (the finding), 0 otherwise (a
// fixed ns-3), 2 if the flow saw no timeout (the setup did not happen).
//
// Build and run (Debian's libns3-dev, ns-3.37; ns-3-dev: same API):
//   g++ -std=c++17 -O2 rto-collapse-without-sample.cc \
//     -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
//     -lns3-applications -o rto-collapse-without-sample && ./rto-collapse-without-sample
// (bench/ns3-findings.sh, `make ns3-findings`, does this for every scenario here.)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <iostream>

using namespace ns3;

namespace
{
const uint32_t kSegment = 1448;
const Time kChange = Seconds(5);
const Time kNewOneWay = Seconds(3);

Time g_srtt;
uint32_t g_cwnd = 0;
uint32_t g_timeouts = 0;
uint32_t g_timeoutsAfterChange = 0;

void
OnRtt(Time, Time srtt)
{
    g_srtt = srtt;
}

void
OnCwnd(uint32_t, uint32_t cwnd)
{
    g_cwnd = cwnd;
}

void
OnState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t to)
{
    if (to == TcpSocketState::CA_LOSS)
    {
        g_timeouts++;
        if (Simulator::Now() >= kChange)
        {
            g_timeoutsAfterChange++;
        }
    }
}

void
Connect()
{
    const std::string sock = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(sock + "RTT", MakeCallback(&OnRtt));
    Config::ConnectWithoutContext(sock + "CongestionWindow", MakeCallback(&OnCwnd));
    Config::ConnectWithoutContext(sock + "CongState", MakeCallback(&OnState));
}

void
Report()
{
    std::cout << Simulator::Now().GetSeconds() << " s: srtt " << g_srtt.GetMilliSeconds() << " ms, cwnd "
              << g_cwnd / kSegment << " segments, timeouts " << g_timeouts << "\n";
    Simulator::Schedule(Seconds(5), &Report);
}

void
ChangeRoute()
{
    Config::Set("/ChannelList/0/$ns3::PointToPointChannel/Delay", TimeValue(kNewOneWay));
    std::cout << Simulator::Now().GetSeconds() << " s: one-way delay 50 ms -> "
              << kNewOneWay.GetMilliSeconds() << " ms (RTT 0.1 s -> " << 2 * kNewOneWay.GetSeconds()
              << " s)\n";
}
} // namespace

int
main(int argc, char* argv[])
{
    CommandLine cmd;
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    link.SetChannelAttribute("Delay", StringValue("50ms"));
    link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("100p"));
    NetDeviceContainer devices = link.Install(nodes);

    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(devices);

    const uint16_t port = 5001;
    BulkSendHelper sender("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    ApplicationContainer send = sender.Install(nodes.Get(0));
    send.Start(Seconds(0.1));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(nodes.Get(1)).Start(Seconds(0));
    Simulator::Schedule(Seconds(0.1) + NanoSeconds(1), &Connect);
    Simulator::Schedule(kChange, &ChangeRoute);
    Simulator::Schedule(Seconds(5) - NanoSeconds(1), &Report);

    const Time end = kChange + Seconds(60);
    Simulator::Stop(end);
    Simulator::Run();
    Simulator::Destroy();

    const Time newRtt = 2 * kNewOneWay;
    std::cout << "after the change: " << g_timeoutsAfterChange << " timeouts in "
              << (end - kChange).GetSeconds() << " s; srtt at the end " << g_srtt.GetMilliSeconds()
              << " ms against a path RTT of " << newRtt.GetMilliSeconds() << " ms\n";
    if (g_timeoutsAfterChange == 0)
    {
        std::cout << "no timeout after the change: the scenario did not reproduce its setup\n";
        return 2;
    }
    if (g_srtt < newRtt / 2)
    {
        std::cout << "FINDING: srtt " << g_srtt.GetMilliSeconds() << " ms stays below half the path RTT ("
                  << newRtt.GetMilliSeconds() << " ms) " << (end - kChange).GetSeconds()
                  << " s after it grew, with " << g_timeoutsAfterChange
                  << " timeouts (RFC 6298 §5: the backed-off RTO is kept until a new RTT measurement; "
                     "RFC 7323 §4: timestamps give one from retransmitted segments)\n";
        return 1;
    }
    return 0;
}
