// ns-3 TcpYeah: ssthresh wraps to about 2^32 bytes when a loss is
// detected with less than two segments in flight.
//
// actfuzz finding (issue 50, the ns-3 models hunt:
// docs/hunts/2026-11-28-ns3-models.md; docs/bugs/ns3-yeah-ssthresh-wrap.md).
// TcpYeah::GetSsThresh (tcp-yeah.cc) returns
//   max(bytesInFlight − reduction·segmentSize, 2·segmentSize)
// in uint32_t, with reduction ≥ 2 segments whenever YeAH's queue estimate
// m_lastQ is at least 2 (or it counts itself competing with Reno). With
// one segment in flight the subtraction wraps, and the max keeps the
// wrapped value: ssthresh ≈ 4.29e9 bytes. RFC 5681 §3.1 eq. (4) gives
// max(FlightSize/2, 2·SMSS) (2 segments here); YeAH (Baiocchi et al.,
// PFLDnet 2007) reduces by at most the queue.
//
// A standalone scenario: two nodes, a 10 Mbit/s point-to-point link with
// 20 ms one-way delay and a 1,000-packet queue (it never overflows, so
// YeAH's queue estimate grows); one TCP flow (TcpYeah, ns-3's defaults
// otherwise) sends 300 segments and closes; the receiver's device drops
// the last data segment, so a timeout finds it alone in flight. It prints
// ssthresh as it changes and exits 1 if ssthresh, set by that loss, is
// above 2^31 bytes (the finding), 0 otherwise (a fixed ns-3), 2 if no
// loss set ssthresh (the scenario did not reproduce its setup).
//
// Build and run (Debian's libns3-dev, ns-3.37; ns-3-dev: same API):
//   g++ -std=c++17 -O2 yeah-ssthresh-wrap.cc \
//     -lns3-core -lns3-network -lns3-internet -lns3-point-to-point \
//     -lns3-applications -o yeah-ssthresh-wrap && ./yeah-ssthresh-wrap
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
const uint32_t kSegments = 300;

uint32_t g_calls = 0;      // ssthresh trace calls: the first sets its initial value
uint32_t g_changes = 0;    // ssthresh changes after its initial value
uint32_t g_ssthresh = 0;   // the first value a loss set
uint32_t g_inFlight = 0;   // bytes in flight when it was set
uint32_t g_lastInFlight = 0;

void
OnSsthresh(uint32_t, uint32_t ssthresh)
{
    std::cout << Simulator::Now().GetSeconds() << " s: ssthresh " << ssthresh << " bytes, "
              << g_lastInFlight << " bytes in flight\n";
    if (g_calls++ == 0)
    {
        return; // the connection's initial ssthresh, not a loss
    }
    if (g_changes++ == 0)
    {
        g_ssthresh = ssthresh;
        g_inFlight = g_lastInFlight;
    }
}

void
OnInFlight(uint32_t, uint32_t inFlight)
{
    g_lastInFlight = inFlight;
}

void
Connect()
{
    const std::string sock = "/NodeList/0/$ns3::TcpL4Protocol/SocketList/0/";
    Config::ConnectWithoutContext(sock + "SlowStartThreshold", MakeCallback(&OnSsthresh));
    Config::ConnectWithoutContext(sock + "BytesInFlight", MakeCallback(&OnInFlight));
}
} // namespace

int
main(int argc, char* argv[])
{
    CommandLine cmd;
    cmd.Parse(argc, argv);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpYeah::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(4 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(4 << 20));

    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper link;
    link.SetDeviceAttribute("DataRate", StringValue("10Mbps"));
    link.SetChannelAttribute("Delay", StringValue("20ms"));
    link.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1000p"));
    NetDeviceContainer devices = link.Install(nodes);

    // The receiver's arriving packets: the SYN, the handshake's ACK, then
    // the data segments; the last of them is dropped.
    Ptr<ReceiveListErrorModel> drop = CreateObject<ReceiveListErrorModel>();
    drop->SetList({2 + kSegments - 1});
    devices.Get(1)->SetAttribute("ReceiveErrorModel", PointerValue(drop));

    InternetStackHelper internet;
    internet.Install(nodes);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.1.1.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addresses.Assign(devices);

    const uint16_t port = 5001;
    BulkSendHelper sender("ns3::TcpSocketFactory", InetSocketAddress(ifs.GetAddress(1), port));
    sender.SetAttribute("MaxBytes", UintegerValue(kSegments * kSegment));
    ApplicationContainer send = sender.Install(nodes.Get(0));
    send.Start(Seconds(0.1));
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    sink.Install(nodes.Get(1)).Start(Seconds(0));
    Simulator::Schedule(Seconds(0.1) + NanoSeconds(1), &Connect);

    Simulator::Stop(Seconds(20));
    Simulator::Run();
    Simulator::Destroy();

    if (g_changes == 0)
    {
        std::cout << "no loss set ssthresh: the scenario did not reproduce its setup\n";
        return 2;
    }
    std::cout << "the loss set ssthresh to " << g_ssthresh << " bytes with " << g_inFlight
              << " bytes in flight\n";
    if (g_ssthresh > (1U << 31))
    {
        std::cout << "FINDING: ssthresh " << g_ssthresh << " bytes (about 2^32) after a loss with "
                  << g_inFlight << " bytes in flight: bytesInFlight − reduction·segmentSize wrapped "
                     "(RFC 5681 §3.1 eq. (4): max(FlightSize/2, 2·SMSS) = "
                  << 2 * kSegment << " bytes)\n";
        return 1;
    }
    return 0;
}
