// ns-3 TcpBbr: the ACK that ends a fast recovery sets cwnd to ssthresh,
// which BBR never sets: cwnd becomes 2^32 − 1 bytes.
//
// actfuzz finding (issue 46's detection list and issue 50's known
// candidates; the ns-3 models hunt, docs/hunts/2026-11-28-ns3-models.md;
// docs/bugs/ns3-bbr-cwnd-ssthresh-on-recovery-exit.md). In
// TcpSocketBase::ProcessAck the branch that leaves CA_RECOVERY sets
// m_cWnd = m_ssThresh without the HasCongControl() guard that the CA_CWR
// exit a few lines above has. TcpBbr::GetSsThresh returns tcb->m_ssThresh
// unchanged (BBR keeps no ssthresh: draft-ietf-ccwg-bbr §5.6 restores the
// saved cwnd on leaving recovery), so it is still its initial UINT32_MAX.
// TcpBbr::SetCwnd only lowers cwnd to its target once the pipe is filled:
// a recovery that ends in Startup leaves cwnd at 2^32 − 1.
//
// A standalone scenario: two nodes, a 10 Mbit/s point-to-point link with
// 50 ms one-way delay and a queue that never overflows; one bulk TCP flow
// (TcpBbr, SACK on, ns-3's defaults otherwise); the receiver's device drops
// exactly one data packet (the 40th it receives, in Startup). It prints
// cwnd and the congestion state as they change and exits 1 if cwnd goes
// above 2^31 bytes after the recovery (the finding), 0 otherwise (a fixed
// ns-3), 2 if no recovery ended (the scenario did not reproduce its setup).
//
// Build and run (Debian's libns3-dev, ns-3.37; ns-3-dev: same API):
//   g++ -std=c++17 -O2 bbr-cwnd-ssthresh-on-recovery-exit.cc \
//     -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
//     -lns3-applications -o bbr-cwnd-ssthresh-on-recovery-exit && ./bbr-cwnd-ssthresh-on-recovery-exit
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

bool g_exited = false;       // a fast recovery has ended
Time g_exitTime;
uint32_t g_maxAfterExit = 0; // the largest cwnd from the exit on
uint32_t g_printed = 0;

void
OnCwnd(uint32_t, uint32_t cwnd)
{
    if (g_exited)
    {
        g_maxAfterExit = std::max(g_maxAfterExit, cwnd);
    }
    if (g_printed < 60 || cwnd > (1U << 31))
    {
        g_printed++;
        std::cout << Simulator::Now().GetSeconds() << " s: cwnd " << cwnd << " bytes\n";
    }
}

void
OnState(TcpSocketState::TcpCongState_t from, TcpSocketState::TcpCongState_t to)
{
    std::cout << Simulator::Now().GetSeconds() << " s: state " << TcpSocketState::TcpCongStateName[from]
              << " -> " << TcpSocketState::TcpCongStateName[to] << "\n";
    if (from == TcpSocketState::CA_RECOVERY && to == TcpSocketState::CA_OPEN && !g_exited)
    {
        g_exited = true;
        g_exitTime = Simulator::Now();
    }
}

void
Connect()
{
    const std::string sock = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(sock + "CongestionWindow", MakeCallback(&OnCwnd));
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

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpBbr::GetTypeId()));
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

    if (!g_exited)
    {
        std::cout << "no fast recovery ended: the scenario did not reproduce its setup\n";
        return 2;
    }
    std::cout << "recovery ended at " << g_exitTime.GetSeconds() << " s; largest cwnd from then on "
              << g_maxAfterExit << " bytes\n";
    if (g_maxAfterExit > (1U << 31))
    {
        std::cout << "FINDING: cwnd " << g_maxAfterExit
                  << " bytes (2^32 - 1) after the ACK that ends the recovery: cwnd = ssthresh, which BBR "
                     "never sets (draft-ietf-ccwg-bbr: on leaving recovery BBR restores its saved cwnd)\n";
        return 1;
    }
    return 0;
}
