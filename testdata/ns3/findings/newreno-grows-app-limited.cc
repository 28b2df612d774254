// ns-3 TcpNewReno: cwnd grows without bound while the application, not
// cwnd, limits the sender.
//
// actfuzz finding (issue 46/50, oracle cwnd-validation;
// docs/bugs/ns3-newreno-grows-app-limited.md). TcpNewReno::IncreaseWindow
// (src/internet/model/tcp-congestion-ops.cc) adds one segment per ACK in
// slow start and MSS²/cwnd in congestion avoidance on every ACK that
// acknowledges new data, without asking whether cwnd limited the sender.
// RFC 7661 §4.3 (a sender whose pipeACK is below half of cwnd is in the
// non-validated phase and does not grow cwnd); RFC 5681 §4.1's restart
// window and Linux's tcp_is_cwnd_limited (tcp_reno_cong_avoid returns when
// it is false) follow the same principle. ns-3.42 (commit f75345fa0,
// fixes #966) sets TcpSocketState::m_isCwndLimited in
// TcpSocketBase::SendDataPacket and made TcpCubic and TcpLinuxReno check
// it; TcpNewReno (ns-3's default congestion control until 3.34, and the
// base class of eleven other models, none of which checks it) does not
// check it in ns-3-dev either. --cca runs another model on the same
// scenario (e.g. --cca=TcpScalable, which inherits IncreaseWindow).
//
// A standalone scenario: two nodes, a 100 Mbit/s point-to-point link with
// 20 ms one-way delay (BDP 345 segments), no loss; one TCP flow
// (TcpNewReno, ns-3's defaults otherwise) fed by an OnOffApplication that
// is always on at 0.3 Mbit/s, one 1448-byte packet every 38.6 ms: about
// one segment per 40 ms round trip, so the sender never has more than a
// few segments in flight. It prints cwnd every 5 s and, at the end, the
// largest number of bytes in flight the run saw and the final cwnd. Exit
// status: 1 if the final cwnd exceeds 4 × the largest flight and 2 ×
// the initial window (the finding), 0 otherwise (a fixed ns-3), 2 if the
// flow sent nothing (the scenario did not reproduce its setup).
//
// Build and run (Debian's libns3-dev, ns-3.37; ns-3-dev: same API):
//   g++ -std=c++17 -O2 newreno-grows-app-limited.cc \
//     -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
//     -lns3-applications -o newreno-grows-app-limited && ./newreno-grows-app-limited
// (bench/ns3-findings.sh, `make ns3-findings`, does this for every scenario here.)

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <iostream>

using namespace ns3;

namespace
{
const uint32_t kSegment = 1448;
const uint32_t kInitialWindow = 10;

uint32_t g_cwnd = 0;
uint32_t g_maxInFlight = 0;
uint64_t g_acked = 0;

void
OnCwnd(uint32_t, uint32_t cwnd)
{
    g_cwnd = cwnd;
}

void
OnInFlight(uint32_t, uint32_t inFlight)
{
    g_maxInFlight = std::max(g_maxInFlight, inFlight);
}

void
OnRx(Ptr<const Packet> packet, const Address&)
{
    g_acked += packet->GetSize();
}

void
Report()
{
    std::cout << Simulator::Now().GetSeconds() << "s cwnd " << g_cwnd / kSegment
              << " segments, largest flight so far " << g_maxInFlight << " B, delivered "
              << g_acked << " B\n";
    Simulator::Schedule(Seconds(5), &Report);
}

void
Connect()
{
    const std::string sock = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(sock + "CongestionWindow", MakeCallback(&OnCwnd));
    Config::ConnectWithoutContext(sock + "BytesInFlight", MakeCallback(&OnInFlight));
}
} // namespace

int
main(int argc, char* argv[])
{
    std::string rate = "0.3Mbps";
    std::string cca = "TcpNewReno";
    double seconds = 30;
    CommandLine cmd;
    cmd.AddValue("rate", "the application's sending rate", rate);
    cmd.AddValue("seconds", "simulated seconds", seconds);
    cmd.AddValue("cca", "the congestion control's TypeId name, without ns3::", cca);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName("ns3::" + cca)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(kInitialWindow));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    link.SetChannelAttribute("Delay", StringValue("20ms"));
    link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
    NetDeviceContainer devices = link.Install(nodes);

    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(devices);

    const uint16_t port = 5001;
    OnOffHelper sender("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    sender.SetConstantRate(DataRate(rate), kSegment);
    ApplicationContainer send = sender.Install(nodes.Get(0));
    send.Start(Seconds(0.1));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer recv = sink.Install(nodes.Get(1));
    recv.Start(Seconds(0));
    recv.Get(0)->TraceConnectWithoutContext("Rx", MakeCallback(&OnRx));
    Simulator::Schedule(Seconds(0.1) + NanoSeconds(1), &Connect);
    Simulator::Schedule(Seconds(5), &Report);

    Simulator::Stop(Seconds(seconds));
    Simulator::Run();
    Simulator::Destroy();

    if (g_acked == 0 || g_maxInFlight == 0)
    {
        std::cout << "nothing delivered: the scenario did not reproduce its setup\n";
        return 2;
    }
    std::cout << cca << " after " << seconds << " s at " << rate << ": largest flight " << g_maxInFlight
              << " B (" << (g_maxInFlight + kSegment - 1) / kSegment << " segments), cwnd "
              << g_cwnd << " B (" << g_cwnd / kSegment << " segments)\n";
    if (g_cwnd > 4 * g_maxInFlight && g_cwnd > 2 * kInitialWindow * kSegment)
    {
        std::cout << "FINDING: cwnd grew to " << g_cwnd / kSegment
                  << " segments while the sender never had more than "
                  << (g_maxInFlight + kSegment - 1) / kSegment
                  << " in flight (RFC 7661 §4.3: no growth while not cwnd-limited; Linux "
                     "tcp_is_cwnd_limited)\n";
        return 1;
    }
    return 0;
}
