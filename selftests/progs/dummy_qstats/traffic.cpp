#include "qstats.hpp"
#include "sysfs.hpp"

namespace dummy_qstats {

// AF_PACKET senders, one per CPU. With bypass (PACKET_QDISC_BYPASS) the packets go
// through dev_direct_xmit() on the queue XPS (or, without it, the sending CPU) picks;
// without, through dev_queue_xmit() and the egress hook.
std::vector<pkt::ThreadResult> send(int ifindex, const std::vector<int> &cpus,
                                    std::uint64_t per_cpu, bool bypass,
                                    const std::atomic<bool> *stop)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = ifindex;
    cfg.mode = pkt::TxMode::sendmmsg;
    cfg.qdisc_bypass = bypass;
    cfg.cpus = cpus;
    cfg.count = per_cpu;
    cfg.frame.frame_len = kFrameLen;
    return stop != nullptr ? pkt::run_senders(cfg, *stop) : pkt::run_senders(cfg);
}

// Empty if every sender sent what it was asked to (count 0: whatever it could).
std::string sender_problem(const std::vector<pkt::ThreadResult> &res, std::uint64_t count)
{
    for (const pkt::ThreadResult &r : res) {
        if (!r.error.empty())
            return concat("sender on CPU ", r.cpu, ": ", r.error);
        if (count != 0 && r.sent != count)
            return concat("sender on CPU ", r.cpu, " sent ", r.sent, " of ", count);
    }
    return {};
}

std::uint64_t total_sent(const std::vector<pkt::ThreadResult> &res)
{
    std::uint64_t n = 0;
    for (const pkt::ThreadResult &r : res)
        n += r.sent;
    return n;
}

// The packets the i-th round of a spread puts on the wire.
std::uint64_t round_packets(std::uint32_t i)
{
    return kRoundPackets + kRoundStep * i;
}

// Sends count packets of one flow (UDP source port src_port) from one sender pinned to
// cpu: through dev_queue_xmit(), or with bypass through dev_direct_xmit(). Returns an
// error message, or an empty string.
std::string send_flow(int ifindex, int cpu, std::uint16_t src_port, std::uint64_t count,
                      bool bypass)
{
    pkt::SenderConfig cfg;
    cfg.ifindex = ifindex;
    cfg.mode = pkt::TxMode::sendmmsg;
    cfg.qdisc_bypass = bypass;
    cfg.cpus = {cpu};
    cfg.count = count;
    cfg.frame.frame_len = kFrameLen;
    cfg.frame.src_port = src_port; // the only sender: thread 0 uses src_port itself
    return sender_problem(pkt::run_senders(cfg), count);
}

std::string fmt_cpus(const std::vector<int> &cpus)
{
    std::string s;
    for (const int c : cpus)
        s += concat(s.empty() ? "" : ", ", c);
    return s;
}

// Whether queues/tx-<queue>/xps_cpus of dev is an empty mask (value: what it holds);
// nullopt if it cannot be read (a kernel without CONFIG_XPS has no map either).
std::optional<bool> xps_empty(const std::string &dev, std::uint32_t queue, std::string &value)
{
    const auto text = netutil::sysfs::read_file(netutil::sysfs::xps_path(dev, queue));
    if (!text)
        return std::nullopt;
    value = text->substr(0, text->find('\n'));
    return value.find_first_not_of("0,") == std::string::npos;
}

} // namespace dummy_qstats
