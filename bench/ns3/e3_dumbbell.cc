// The E3 dumbbell (../shared/EXPERIMENTS.md) in ns-3 (Debian's 3.37), for
// comparing ratelab-netsim with ns-3 (bench/ns3/compare_e3.py runs both).
//
//   s1..s6 --1 Gbit/s, 1 ms-- left --48 Mbit/s, 5.5 ms-- right --1 Gbit/s, 1 ms-- d1..d6
//
// Every flow's base RTT is 15 ms. The left router's port toward the right one
// is the bottleneck: a FIFO of 120 packets waiting behind the one being sent
// (a FifoQueueDisc of 119 in front of the device's one-packet queue; nothing
// else ever fills). Flows 1-3: TCP NewReno from s_i to d_i, each written by
// an application at 16 Mbit/s (1448-byte messages, what ratelab-stack's
// `stream` application does: what it cannot write yet waits and goes out as
// soon as the send buffer has room). Flows 4-6: UDP, Poisson arrivals of
// 1500-byte IPv4 packets (1472 payload bytes) at 8 Mbit/s. All start at 0 s
// and run to the end. What E3 leaves out is set as ratelab-stack's defaults
// (bench/ns3/README.md, "E3"): 1448-byte segments, initial window 10, SACK,
// timestamps, window scaling, delayed ACK every second segment or 40 ms,
// minimum RTO 200 ms, 4 MiB buffers, classic (non-PRR) loss recovery.
//
// Writes one JSON object: per-flow goodput, Jain's fairness, the
// bottleneck's utilisation, drops and queue (sampled every 10 ms), packets
// delivered to the hosts and the wall-clock time of the run. Usage:
//   e3_dumbbell --out=FILE [--duration=SECONDS] [--seed=N] [--recovery=classic|prr]
//               [--cc=newreno|linux-reno]

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace ns3;

namespace
{

constexpr uint32_t kFlowsEach = 3;          // TCP flows, and UDP flows
constexpr uint32_t kSegment = 1448;         // TCP payload bytes per segment
constexpr uint32_t kUdpPayload = 1472;      // a 1500-byte IPv4 packet
constexpr double kTcpAppBps = 16e6;         // each TCP application's rate
constexpr double kUdpBps = 8e6;             // each UDP flow's mean rate (IPv4 bytes)
constexpr uint64_t kBottleneckBps = 48000000;
constexpr uint32_t kBottleneckQueue = 120;  // packets waiting at the bottleneck
constexpr uint32_t kPppHeader = 2;          // bytes a point-to-point frame adds
constexpr uint32_t kBuffer = 4 << 20;       // TCP send and receive buffers
constexpr double kSampleSeconds = 0.010;    // queue sample interval

[[noreturn]] void
Fail(const std::string& message)
{
    std::fprintf(stderr, "e3_dumbbell: %s\n", message.c_str());
    std::exit(2);
}

double
ParseNumber(const std::string& option, const std::string& text, double lo, double hi)
{
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > hi)
    {
        std::ostringstream message;
        message << std::setprecision(12) << "--" << option << ": expected a number from " << lo << " to " << hi
                << ", got '" << text << "'";
        Fail(message.str());
    }
    return v;
}

// An application writing kSegment-byte messages at kTcpAppBps into a TCP
// socket from the moment it connects; a message the send buffer cannot take
// yet waits and is written when the socket reports room.
struct Stream
{
    Ptr<Socket> socket;
    bool connected = false;
    Time start;
    uint64_t released = 0; // messages due so far
    uint64_t written = 0;  // messages written into the socket
    // What the sender did, counted as ratelab-stack counts it: a data segment
    // starting below the highest sequence number sent is a retransmission.
    uint32_t highestSent = 0;
    bool anySent = false;
    uint64_t retransmissions = 0;
    uint64_t recoveries = 0;
    uint64_t rtos = 0;

    void Flush()
    {
        while (written < released && socket->GetTxAvailable() >= kSegment)
        {
            if (socket->Send(Create<Packet>(kSegment)) < 0)
            {
                break;
            }
            written++;
        }
    }

    void Tick()
    {
        released++;
        Flush();
        Simulator::Schedule(Seconds(kSegment * 8.0 / kTcpAppBps), &Stream::Tick, this);
    }
};

// Poisson arrivals of kUdpPayload-byte datagrams on a connected UDP socket.
struct PoissonSource
{
    Ptr<Socket> socket;
    Ptr<ExponentialRandomVariable> gap;
    uint64_t sent = 0;

    void Send()
    {
        if (socket->Send(Create<Packet>(kUdpPayload)) >= 0)
        {
            sent++;
        }
        Simulator::Schedule(Seconds(gap->GetValue()), &PoissonSource::Send, this);
    }
};

struct Bottleneck
{
    Ptr<QueueDisc> disc;
    Ptr<Queue<Packet>> device;
    uint64_t txPackets = 0;
    uint64_t txBytes = 0; // on the wire: IPv4 packet + PPP header
    uint64_t samples = 0;
    uint64_t queueSum = 0;
    uint32_t queueMax = 0;
};

Bottleneck g_bottleneck;
uint64_t g_delivered = 0;

void
OnBottleneckTx(Ptr<const Packet> packet)
{
    g_bottleneck.txPackets++;
    g_bottleneck.txBytes += packet->GetSize();
}

void
OnLocalDeliver(const Ipv4Header&, Ptr<const Packet>, uint32_t)
{
    g_delivered++;
}

void
Sample()
{
    uint32_t queue = g_bottleneck.disc->GetNPackets() + g_bottleneck.device->GetNPackets();
    g_bottleneck.samples++;
    g_bottleneck.queueSum += queue;
    g_bottleneck.queueMax = std::max(g_bottleneck.queueMax, queue);
    Simulator::Schedule(Seconds(kSampleSeconds), &Sample);
}

std::vector<Stream> g_streams(kFlowsEach);

void
OnConnected(Ptr<Socket> socket)
{
    for (auto& s : g_streams)
    {
        if (s.socket == socket && !s.connected)
        {
            s.connected = true;
            s.Tick();
        }
    }
}

void
OnTcpTx(Stream* s, Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase>)
{
    uint32_t len = packet->GetSize();
    if (len == 0)
    {
        return;
    }
    uint32_t seq = header.GetSequenceNumber().GetValue();
    uint32_t end = seq + len;
    if (s->anySent && SequenceNumber32(seq) < SequenceNumber32(s->highestSent))
    {
        s->retransmissions++;
    }
    if (!s->anySent || SequenceNumber32(end) > SequenceNumber32(s->highestSent))
    {
        s->highestSent = end;
        s->anySent = true;
    }
}

void
OnCongState(Stream* s, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        s->rtos++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        s->recoveries++;
    }
}

void
OnConnectFailed(Ptr<Socket>)
{
    Fail("a TCP connection failed");
}

void
OnSendRoom(Ptr<Socket> socket, uint32_t)
{
    for (auto& s : g_streams)
    {
        if (s.socket == socket && s.connected)
        {
            s.Flush();
        }
    }
}

double
Jain(const std::vector<double>& x)
{
    double sum = 0;
    double squares = 0;
    for (double v : x)
    {
        sum += v;
        squares += v * v;
    }
    return squares > 0 ? sum * sum / (double(x.size()) * squares) : 0.0;
}

} // namespace

int
main(int argc, char* argv[])
{
    std::map<std::string, std::string> options = {
        {"out", ""},
        {"duration", "15"},
        {"seed", "42"},
        {"recovery", "classic"},
        {"cc", "newreno"},
    };
    for (int i = 1; i < argc; i++)
    {
        std::string arg = argv[i];
        size_t eq = arg.find('=');
        if (arg.rfind("--", 0) != 0 || eq == std::string::npos)
        {
            Fail("expected --OPTION=VALUE, got '" + arg + "'");
        }
        std::string key = arg.substr(2, eq - 2);
        if (options.find(key) == options.end())
        {
            Fail("unknown option --" + key +
                 " (expected --out, --duration, --seed, --recovery, --cc)");
        }
        options[key] = arg.substr(eq + 1);
    }
    const std::string& outPath = options["out"];
    if (outPath.empty())
    {
        Fail("--out: the output file must be given");
    }
    double duration = ParseNumber("duration", options["duration"], 0.1, 36000);
    double seed = ParseNumber("seed", options["seed"], 1, 4294967295.0);
    if (seed != std::floor(seed))
    {
        Fail("--seed: expected a whole number from 1 to 4294967295, got '" + options["seed"] + "'");
    }
    TypeId recovery;
    if (options["recovery"] == "classic")
    {
        recovery = TcpClassicRecovery::GetTypeId();
    }
    else if (options["recovery"] == "prr")
    {
        recovery = TcpPrrRecovery::GetTypeId();
    }
    else
    {
        Fail("--recovery: expected classic or prr, got '" + options["recovery"] + "'");
    }
    TypeId cc;
    if (options["cc"] == "newreno")
    {
        cc = TcpNewReno::GetTypeId();
    }
    else if (options["cc"] == "linux-reno")
    {
        cc = TcpLinuxReno::GetTypeId();
    }
    else
    {
        Fail("--cc: expected newreno or linux-reno, got '" + options["cc"] + "'");
    }
    std::ofstream out(outPath);
    if (!out)
    {
        Fail("--out: cannot write '" + outPath + "'");
    }

    RngSeedManager::SetSeed(static_cast<uint32_t>(seed));
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(cc));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(recovery));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(10));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(kBuffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(kBuffer));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));

    const uint32_t flows = 2 * kFlowsEach;
    NodeContainer senders;
    senders.Create(flows);
    NodeContainer receivers;
    receivers.Create(flows);
    NodeContainer routers;
    routers.Create(2);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("1Gbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    access.SetQueue("ns3::DropTailQueue",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 10000)));
    PointToPointHelper middle;
    middle.SetDeviceAttribute("DataRate", DataRateValue(DataRate(kBottleneckBps)));
    middle.SetChannelAttribute("Delay", StringValue("5.5ms"));
    middle.SetQueue("ns3::DropTailQueue",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1)));

    InternetStackHelper stack;
    stack.InstallAll();
    Ipv4AddressHelper addresses;
    std::vector<NetDeviceContainer> leftLinks;
    std::vector<NetDeviceContainer> rightLinks;
    std::vector<Ipv4Address> receiverAddress;
    for (uint32_t i = 0; i < flows; i++)
    {
        leftLinks.push_back(access.Install(senders.Get(i), routers.Get(0)));
        std::ostringstream net;
        net << "10.1." << i + 1 << ".0";
        addresses.SetBase(net.str().c_str(), "255.255.255.0");
        addresses.Assign(leftLinks.back());
        rightLinks.push_back(access.Install(routers.Get(1), receivers.Get(i)));
        net.str("");
        net << "10.2." << i + 1 << ".0";
        addresses.SetBase(net.str().c_str(), "255.255.255.0");
        receiverAddress.push_back(addresses.Assign(rightLinks.back()).GetAddress(1));
    }
    NetDeviceContainer bottleneck = middle.Install(routers.Get(0), routers.Get(1));
    // Address assignment gives every device ns-3's default queue disc; only
    // the bottleneck keeps one (the FIFO), the rest have large device queues.
    TrafficControlHelper none;
    for (uint32_t i = 0; i < flows; i++)
    {
        none.Uninstall(leftLinks[i]);
        none.Uninstall(rightLinks[i]);
    }
    addresses.SetBase("10.0.0.0", "255.255.255.0");
    addresses.Assign(bottleneck);
    none.Uninstall(bottleneck);
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize",
                          QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kBottleneckQueue - 1)));
    g_bottleneck.disc = fifo.Install(bottleneck.Get(0)).Get(0);
    Ptr<PointToPointNetDevice> bottleneckDevice =
        DynamicCast<PointToPointNetDevice>(bottleneck.Get(0));
    g_bottleneck.device = bottleneckDevice->GetQueue();
    bottleneckDevice->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&OnBottleneckTx));
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    for (uint32_t i = 0; i < flows; i++)
    {
        for (Ptr<Node> host : {senders.Get(i), receivers.Get(i)})
        {
            host->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "LocalDeliver",
                MakeCallback(&OnLocalDeliver));
        }
    }

    const uint16_t basePort = 5001;
    std::vector<Ptr<PacketSink>> sinks;
    std::vector<PoissonSource> udp(kFlowsEach);
    for (uint32_t i = 0; i < flows; i++)
    {
        bool tcp = i < kFlowsEach;
        const char* factory = tcp ? "ns3::TcpSocketFactory" : "ns3::UdpSocketFactory";
        PacketSinkHelper sinkHelper(factory,
                                    InetSocketAddress(Ipv4Address::GetAny(), basePort + i));
        ApplicationContainer sink = sinkHelper.Install(receivers.Get(i));
        sink.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sink.Get(0)));
        InetSocketAddress to(receiverAddress[i], basePort + i);
        if (tcp)
        {
            Stream& s = g_streams[i];
            s.socket = Socket::CreateSocket(senders.Get(i), TcpSocketFactory::GetTypeId());
            s.socket->Bind();
            s.socket->SetConnectCallback(MakeCallback(&OnConnected),
                                         MakeCallback(&OnConnectFailed));
            s.socket->SetSendCallback(MakeCallback(&OnSendRoom));
            s.socket->TraceConnectWithoutContext("Tx", MakeBoundCallback(&OnTcpTx, &s));
            s.socket->TraceConnectWithoutContext("CongState", MakeBoundCallback(&OnCongState, &s));
            Simulator::Schedule(Seconds(0), [&s, to]() { s.socket->Connect(to); });
        }
        else
        {
            PoissonSource& p = udp[i - kFlowsEach];
            p.socket = Socket::CreateSocket(senders.Get(i), UdpSocketFactory::GetTypeId());
            p.socket->Bind();
            p.socket->Connect(to);
            p.gap = CreateObject<ExponentialRandomVariable>();
            p.gap->SetAttribute("Mean", DoubleValue((kUdpPayload + 28) * 8.0 / kUdpBps));
            p.gap->SetStream(i);
            Simulator::Schedule(Seconds(p.gap->GetValue()), &PoissonSource::Send, &p);
        }
    }

    Simulator::Schedule(Seconds(kSampleSeconds), &Sample);
    Simulator::Stop(Seconds(duration) + NanoSeconds(1));
    auto wallStart = std::chrono::steady_clock::now();
    Simulator::Run();
    double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wallStart).count();
    const QueueDisc::Stats& discStats = g_bottleneck.disc->GetStats();
    uint64_t drops = discStats.nTotalDroppedPackets + g_bottleneck.device->GetTotalDroppedPackets();

    std::vector<double> goodput;
    out << std::setprecision(10);
    out << "{\"simulator\": \"ns-3\", \"duration_s\": " << duration << ", \"seed\": " << seed
        << ", \"recovery\": \"" << options["recovery"] << "\", \"cc\": \"" << options["cc"]
        << "\", \"flows\": [";
    for (uint32_t i = 0; i < flows; i++)
    {
        bool tcp = i < kFlowsEach;
        uint64_t bytes = sinks[i]->GetTotalRx();
        goodput.push_back(double(bytes) * 8 / duration);
        out << (i ? ", " : "") << "{\"name\": \"" << (tcp ? "tcp" : "udp")
            << (tcp ? i + 1 : i + 1 - kFlowsEach) << "\", \"transport\": \""
            << (tcp ? "tcp" : "udp") << "\", \"bytes_received\": " << bytes
            << ", \"goodput_bps\": " << goodput.back();
        if (tcp)
        {
            const Stream& s = g_streams[i];
            out << ", \"retransmissions\": " << s.retransmissions
                << ", \"recoveries\": " << s.recoveries << ", \"rtos\": " << s.rtos;
        }
        else
        {
            out << ", \"sent\": " << udp[i - kFlowsEach].sent
                << ", \"received\": " << bytes / kUdpPayload;
        }
        out << "}";
    }
    std::vector<double> tcpGoodput(goodput.begin(), goodput.begin() + kFlowsEach);
    uint64_t ipBytes = g_bottleneck.txBytes - g_bottleneck.txPackets * kPppHeader;
    out << "], \"jain_all\": " << Jain(goodput) << ", \"jain_tcp\": " << Jain(tcpGoodput)
        << ", \"bottleneck\": {\"rate_bps\": " << kBottleneckBps
        << ", \"packets_out\": " << g_bottleneck.txPackets
        << ", \"wire_bytes_out\": " << g_bottleneck.txBytes << ", \"ip_bytes_out\": " << ipBytes
        << ", \"utilisation\": "
        << double(g_bottleneck.txBytes) * 8 / (double(kBottleneckBps) * duration)
        << ", \"drops\": " << drops << ", \"mean_queue_packets\": "
        << (g_bottleneck.samples ? double(g_bottleneck.queueSum) / double(g_bottleneck.samples)
                                 : 0.0)
        << ", \"max_queue_packets\": " << g_bottleneck.queueMax
        << "}, \"delivered_packets\": " << g_delivered << ", \"wall_s\": " << wall << "}\n";
    out.close();
    if (!out)
    {
        Fail("--out: cannot write '" + outPath + "'");
    }
    Simulator::Destroy();
    return 0;
}
