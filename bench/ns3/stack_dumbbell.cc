// One bulk TCP flow across a dumbbell in ns-3 (Debian's 3.37), for comparing
// ns-3's TCP models with ratelab-stack (bench/ns3/compare.py runs both).
//
//   sender --100 Mbit/s, 1 ms-- router --20 Mbit/s, 20 ms-- receiver
//
// The router's port toward the receiver is the bottleneck: a drop-tail
// device queue of 100 packets (no queue disc, so nothing but that queue
// decides a drop). TCP is set to ratelab-stack's defaults where ns-3 has the
// knob: 1448-byte segments (1500-byte packets with timestamps), SACK,
// timestamps, window scaling, a delayed ACK every second segment or after
// 40 ms, minimum RTO 200 ms, initial (SYN) RTO 1 s, classic (non-PRR) loss
// recovery, 4 MiB buffers; Cubic without HyStart. host_stacks/README.md,
// "Compared with ns-3", lists what cannot be matched.
//
// Writes a CSV trace (one row every 10 ms of simulated time) and a JSON
// summary. Usage:
//   stack_dumbbell --cc=reno|newreno|cubic|vegas --csv=FILE --summary=FILE
//                  [--duration=SECONDS] [--iw=SEGMENTS] [--ack-every-segment=0|1]
// (--ack-every-segment=1: no delayed ACKs).

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <string>

using namespace ns3;

namespace
{

constexpr uint32_t kSegment = 1448;              // payload bytes per segment
constexpr uint32_t kBottleneckQueue = 100;       // packets waiting at the router
constexpr uint32_t kAccessQueue = 10000;         // never the one that drops
constexpr uint32_t kBuffer = 4 << 20;            // send and receive buffers
constexpr double kSampleSeconds = 0.010;         // CSV row interval

[[noreturn]] void
Fail(const std::string& message)
{
    std::fprintf(stderr, "stack_dumbbell: %s\n", message.c_str());
    std::exit(2);
}

// A number from the command line, or a one-line error naming the option.
double
ParseNumber(const std::string& option,
            const std::string& text,
            double lo,
            double hi,
            const std::string& unit)
{
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || errno != 0 || !std::isfinite(v) || v < lo || v > hi)
    {
        std::ostringstream message;
        message << "--" << option << ": expected " << lo << " to " << hi << " " << unit
                << ", got '" << text << "'";
        Fail(message.str());
    }
    return v;
}

// What the traces saw; sampled every kSampleSeconds.
struct FlowState
{
    uint64_t cwnd = 0;
    uint64_t ssthresh = std::numeric_limits<uint32_t>::max();
    uint64_t bytesAcked = 0;
    uint32_t highestSent = 0; // highest sequence number sent + 1 (relative)
    bool anySent = false;
    uint64_t retransmissions = 0;
    uint64_t rtos = 0;
    uint64_t recoveries = 0;
    uint64_t queueSamples = 0;
    uint64_t queueSum = 0;
    uint32_t queueMax = 0;
};

FlowState g_flow;
std::ofstream g_csv;
// The bottleneck's waiting packets: the queue disc's and the one packet the
// device holds behind the packet it is transmitting.
Ptr<QueueDisc> g_bottleneckDisc;
Ptr<Queue<Packet>> g_bottleneckDevice;

void
OnCwnd(uint32_t, uint32_t now)
{
    g_flow.cwnd = now;
}

void
OnSsthresh(uint32_t, uint32_t now)
{
    g_flow.ssthresh = now;
}

void
OnHighestRxAck(SequenceNumber32, SequenceNumber32 now)
{
    // ns-3's initial sequence number is 0 and the SYN takes one.
    uint32_t acked = now.GetValue();
    g_flow.bytesAcked = acked > 0 ? acked - 1 : 0;
}

void
OnCongState(TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
{
    if (now == TcpSocketState::CA_LOSS)
    {
        g_flow.rtos++;
    }
    else if (now == TcpSocketState::CA_RECOVERY)
    {
        g_flow.recoveries++;
    }
}

// A data segment that starts below the highest sequence sent so far is a
// retransmission (the same rule ratelab-stack counts by).
void
OnTx(Ptr<const Packet> packet, const TcpHeader& header, Ptr<const TcpSocketBase>)
{
    uint32_t len = packet->GetSize();
    if (len == 0)
    {
        return;
    }
    uint32_t seq = header.GetSequenceNumber().GetValue();
    uint32_t end = seq + len;
    if (g_flow.anySent && SequenceNumber32(seq) < SequenceNumber32(g_flow.highestSent))
    {
        g_flow.retransmissions++;
    }
    if (!g_flow.anySent || SequenceNumber32(end) > SequenceNumber32(g_flow.highestSent))
    {
        g_flow.highestSent = end;
        g_flow.anySent = true;
    }
}

void
ConnectSocketTraces(Ptr<BulkSendApplication> app)
{
    Ptr<Socket> socket = app->GetSocket();
    if (!socket)
    {
        Fail("the bulk sender has no socket after it started");
    }
    socket->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    socket->TraceConnectWithoutContext("SlowStartThreshold", MakeCallback(&OnSsthresh));
    socket->TraceConnectWithoutContext("HighestRxAck", MakeCallback(&OnHighestRxAck));
    socket->TraceConnectWithoutContext("CongState", MakeCallback(&OnCongState));
    socket->TraceConnectWithoutContext("Tx", MakeCallback(&OnTx));
}

void
Sample()
{
    uint32_t queue = g_bottleneckDisc->GetNPackets() + g_bottleneckDevice->GetNPackets();
    g_flow.queueSamples++;
    g_flow.queueSum += queue;
    g_flow.queueMax = std::max(g_flow.queueMax, queue);
    g_csv << Simulator::Now().GetSeconds() << ',' << g_flow.cwnd << ',';
    if (g_flow.ssthresh >= std::numeric_limits<uint32_t>::max())
    {
        g_csv << "inf";
    }
    else
    {
        g_csv << g_flow.ssthresh;
    }
    g_csv << ',' << g_flow.bytesAcked << ',' << queue << '\n';
    Simulator::Schedule(Seconds(kSampleSeconds), &Sample);
}

} // namespace

int
main(int argc, char* argv[])
{
    // Options are parsed here, not by ns3::CommandLine, so that a bad one is a
    // one-line error (CommandLine prints its whole usage).
    std::map<std::string, std::string> options = {
        {"cc", ""},
        {"csv", ""},
        {"summary", ""},
        {"duration", "30"},
        {"iw", "10"},
        {"ack-every-segment", "0"},
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
                 " (expected --cc, --csv, --summary, --duration, --iw, --ack-every-segment)");
        }
        options[key] = arg.substr(eq + 1);
    }
    const std::string& cc = options["cc"];
    const std::string& csvPath = options["csv"];
    const std::string& summaryPath = options["summary"];
    if (options["ack-every-segment"] != "0" && options["ack-every-segment"] != "1")
    {
        Fail("--ack-every-segment: expected 0 or 1, got '" + options["ack-every-segment"] + "'");
    }
    bool ackEverySegment = options["ack-every-segment"] == "1";

    const std::map<std::string, TypeId> models = {
        {"reno", TcpLinuxReno::GetTypeId()},
        {"newreno", TcpNewReno::GetTypeId()},
        {"cubic", TcpCubic::GetTypeId()},
        {"vegas", TcpVegas::GetTypeId()},
    };
    auto model = models.find(cc);
    if (model == models.end())
    {
        Fail("--cc: expected reno, newreno, cubic or vegas, got '" + cc + "'");
    }
    if (csvPath.empty() || summaryPath.empty())
    {
        Fail("--csv and --summary: both output files must be given");
    }
    double duration = ParseNumber("duration", options["duration"], 0.1, 3600, "seconds");
    double iwValue = ParseNumber("iw", options["iw"], 1, 1000, "segments");
    if (iwValue != std::floor(iwValue))
    {
        Fail("--iw: expected 1 to 1000 segments, got '" + options["iw"] + "'");
    }
    auto iw = static_cast<uint32_t>(iwValue);

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(model->second));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(kSegment));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(ackEverySegment ? 1 : 2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(40)));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(1)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(kBuffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(kBuffer));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(MilliSeconds(1)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(false));

    NodeContainer nodes;
    nodes.Create(3); // sender, router, receiver

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    access.SetChannelAttribute("Delay", StringValue("1ms"));
    access.SetQueue("ns3::DropTailQueue",
                    "MaxSize",
                    QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kAccessQueue)));
    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("20Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("20ms"));
    bottleneck.SetQueue("ns3::DropTailQueue",
                        "MaxSize",
                        QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, 1)));
    NetDeviceContainer left = access.Install(nodes.Get(0), nodes.Get(1));
    NetDeviceContainer right = bottleneck.Install(nodes.Get(1), nodes.Get(2));

    InternetStackHelper stack;
    stack.Install(nodes);
    // The router's drop-tail queue: a FIFO queue disc of 99 packets in front of
    // the device's one-packet queue, so 100 packets wait behind the one being
    // transmitted. (Without a queue disc, ns-3 3.37 drops packets that find the
    // device queue full without tracing or counting them.)
    TrafficControlHelper fifo;
    fifo.SetRootQueueDisc("ns3::FifoQueueDisc",
                          "MaxSize",
                          QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, kBottleneckQueue - 1)));
    g_bottleneckDisc = fifo.Install(right.Get(0)).Get(0);
    Ipv4AddressHelper addresses;
    addresses.SetBase("10.0.1.0", "255.255.255.0");
    addresses.Assign(left);
    addresses.SetBase("10.0.2.0", "255.255.255.0");
    Ipv4InterfaceContainer rightIf = addresses.Assign(right);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();
    // Address assignment gave the other devices ns-3's default queue disc;
    // their large device queues are all they need (they never fill).
    TrafficControlHelper none;
    none.Uninstall(left);
    none.Uninstall(right.Get(1));
    g_bottleneckDevice = DynamicCast<PointToPointNetDevice>(right.Get(0))->GetQueue();

    const uint16_t port = 5001;
    PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer sink = sinkHelper.Install(nodes.Get(2));
    sink.Start(Seconds(0));
    BulkSendHelper bulkHelper("ns3::TcpSocketFactory",
                              InetSocketAddress(rightIf.GetAddress(1), port));
    bulkHelper.SetAttribute("MaxBytes", UintegerValue(0));
    bulkHelper.SetAttribute("SendSize", UintegerValue(kSegment));
    ApplicationContainer bulk = bulkHelper.Install(nodes.Get(0));
    bulk.Start(Seconds(0));
    auto bulkApp = DynamicCast<BulkSendApplication>(bulk.Get(0));
    // The socket exists once the application has started (at time 0).
    Simulator::Schedule(NanoSeconds(1), &ConnectSocketTraces, bulkApp);

    g_csv.open(csvPath);
    if (!g_csv)
    {
        Fail("--csv: cannot write '" + csvPath + "'");
    }
    g_csv << std::setprecision(10);
    g_csv << "time_s,cwnd_bytes,ssthresh_bytes,bytes_acked,queue_packets\n";
    Simulator::Schedule(Seconds(kSampleSeconds), &Sample);
    Simulator::Stop(Seconds(duration) + NanoSeconds(1));
    Simulator::Run();
    const QueueDisc::Stats& discStats = g_bottleneckDisc->GetStats();
    uint64_t drops = discStats.nTotalDroppedPackets + g_bottleneckDevice->GetTotalDroppedPackets();
    Simulator::Destroy();
    g_csv.close();

    std::ofstream summary(summaryPath);
    if (!summary)
    {
        Fail("--summary: cannot write '" + summaryPath + "'");
    }
    summary << std::setprecision(15);
    double meanQueue =
        g_flow.queueSamples ? double(g_flow.queueSum) / double(g_flow.queueSamples) : 0.0;
    summary << "{\"stack\": \"ns-3\", \"cc\": \"" << cc << "\", \"model\": \""
            << model->second.GetName() << "\", \"duration_s\": " << duration
            << ", \"bytes_acked\": " << g_flow.bytesAcked
            << ", \"goodput_bps\": " << double(g_flow.bytesAcked) * 8 / duration
            << ", \"retransmissions\": " << g_flow.retransmissions
            << ", \"rtos\": " << g_flow.rtos << ", \"recoveries\": " << g_flow.recoveries
            << ", \"drops\": " << drops << ", \"mean_queue_packets\": " << meanQueue
            << ", \"max_queue_packets\": " << g_flow.queueMax << "}\n";
    return 0;
}
