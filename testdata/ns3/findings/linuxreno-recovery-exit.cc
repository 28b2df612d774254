// ns-3 TcpLinuxReno: the ACK that ends a fast recovery grows cwnd past
// ssthresh by every segment SACKed during the recovery.
//
// actfuzz finding (issue 46/50, oracle recovery-exit;
// docs/bugs/ns3-linuxreno-recovery-exit.md). TcpSocketBase::ProcessAck,
// leaving CA_RECOVERY, sets cWnd = ssThresh and then calls
// TcpLinuxReno::IncreaseWindow with segsAcked = (ackNumber −
// oldHeadSequence) / segmentSize: every segment between snd_una and the
// ACK, the ones SACKed during the recovery included. RFC 5681 §3.2 step 6
// (and RFC 6937 at the end of PRR) sets cwnd to ssthresh there; Linux then
// grows by what that ACK newly delivered (acked_sacked in
// tcp_cong_control), here one segment.
//
// A standalone scenario: two nodes, a 10 Mbit/s point-to-point link with
// 50 ms one-way delay and a queue that never overflows; one bulk TCP flow
// (TcpLinuxReno, SACK on, ns-3's defaults otherwise); the receiver's
// device drops exactly one data packet (the 40th it receives, during slow
// start). It prints cwnd, ssthresh and the congestion state as they change
// and, for the ACK that ends the recovery, ssthresh and the largest cwnd
// that ACK left. Exit status: 1 if that cwnd exceeds ssthresh by more than
// one segment (the finding), 0 otherwise (a fixed ns-3), 2 if no recovery
// ended (the scenario did not reproduce its setup).
//
// Build and run (Debian's libns3-dev, ns-3.37; ns-3-dev: same API):
//   g++ -std=c++17 -O2 linuxreno-recovery-exit.cc \
//     -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
//     -lns3-applications -o linuxreno-recovery-exit && ./linuxreno-recovery-exit
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

uint32_t g_cwnd = 0;
uint32_t g_ssthresh = 0;
Time g_exitTime = Seconds(-1);
uint32_t g_exitSsthresh = 0;
uint32_t g_exitCwnd = 0;

void
OnCwnd(uint32_t, uint32_t cwnd)
{
    g_cwnd = cwnd;
    if (Simulator::Now() == g_exitTime)
    {
        g_exitCwnd = std::max(g_exitCwnd, cwnd);
    }
    std::cout << Simulator::Now().GetSeconds() << "s cwnd " << cwnd / kSegment << "\n";
}

void
OnSsthresh(uint32_t, uint32_t ssthresh)
{
    g_ssthresh = ssthresh;
    std::cout << Simulator::Now().GetSeconds() << "s ssthresh " << ssthresh / kSegment << "\n";
}

void
OnState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    std::cout << Simulator::Now().GetSeconds() << "s state " << TcpSocketState::TcpCongStateName[from]
              << " -> " << TcpSocketState::TcpCongStateName[to] << "\n";
    if (from == TcpSocketState::CA_RECOVERY && to == TcpSocketState::CA_OPEN && g_exitTime < Seconds(0))
    {
        g_exitTime = Simulator::Now();
        g_exitSsthresh = g_ssthresh;
        g_exitCwnd = g_cwnd;
    }
}

void
Connect()
{
    const std::string sock = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(sock + "CongestionWindow", MakeCallback(&OnCwnd));
    Config::ConnectWithoutContext(sock + "SlowStartThreshold", MakeCallback(&OnSsthresh));
    Config::ConnectWithoutContext(sock + "CongState", MakeCallback(&OnState));
}
} // namespace

int
main(int argc, char* argv[])
{
    uint32_t dropIndex = 40;
    CommandLine cmd;
    cmd.AddValue("drop", "index of the data packet the receiver drops", dropIndex);
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpLinuxReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    link.SetChannelAttribute("Delay", StringValue("50ms"));
    link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("10000p"));
    NetDeviceContainer devices = link.Install(nodes);

    // The receiver drops its dropIndex-th arriving packet (the handshake's
    // two count too): one loss in slow start.
    Ptr<ReceiveListErrorModel> drop = CreateObject<ReceiveListErrorModel>();
    drop->SetList({dropIndex});
    devices.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(drop));

    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(devices);

    const uint16_t port = 5001;
    BulkSendHelper sender("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    sender.SetAttribute("MaxBytes", UintegerValue(3000000));
    ApplicationContainer send = sender.Install(nodes.Get(0));
    send.Start(Seconds(0.1));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(nodes.Get(1)).Start(Seconds(0));
    Simulator::Schedule(Seconds(0.1) + NanoSeconds(1), &Connect);

    Simulator::Stop(Seconds(10));
    Simulator::Run();
    Simulator::Destroy();

    if (g_exitTime < Seconds(0))
    {
        std::cout << "no fast recovery ended: the scenario did not reproduce its setup\n";
        return 2;
    }
    std::cout << "recovery ended at " << g_exitTime.GetSeconds() << " s: ssthresh "
              << g_exitSsthresh / kSegment << " segments, cwnd after that ACK "
              << g_exitCwnd / kSegment << " segments\n";
    if (g_exitCwnd > g_exitSsthresh + kSegment)
    {
        std::cout << "FINDING: cwnd exceeds ssthresh by " << (g_exitCwnd - g_exitSsthresh) / kSegment
                  << " segments on the ACK that ends the recovery (RFC 5681 §3.2 step 6: cwnd = "
                     "ssthresh; Linux: + what the ACK newly delivered)\n";
        return 1;
    }
    return 0;
}
