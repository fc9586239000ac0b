#include "packet_sender.hpp"

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

namespace netutil::pkt {
namespace {

void put16(std::uint8_t *p, std::uint16_t v)
{
    p[0] = static_cast<std::uint8_t>(v >> 8);
    p[1] = static_cast<std::uint8_t>(v);
}

void put32(std::uint8_t *p, std::uint32_t v)
{
    put16(p, static_cast<std::uint16_t>(v >> 16));
    put16(p + 2, static_cast<std::uint16_t>(v));
}

class Mapping {
public:
    Mapping() = default;
    ~Mapping()
    {
        if (addr_ != nullptr)
            munmap(addr_, len_);
    }
    Mapping(const Mapping &) = delete;
    Mapping &operator=(const Mapping &) = delete;
    Mapping(Mapping &&) = delete;
    Mapping &operator=(Mapping &&) = delete;

    bool map(int fd, std::size_t len)
    {
        void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
            return false;
        addr_ = p;
        len_ = len;
        return true;
    }
    std::uint8_t *data() const { return static_cast<std::uint8_t *>(addr_); }

private:
    void *addr_ = nullptr;
    std::size_t len_ = 0;
};

sockaddr_ll dest_addr(const SenderConfig &cfg)
{
    sockaddr_ll addr{};
    addr.sll_family = AF_PACKET;
    addr.sll_protocol = htons(ETH_P_IP);
    addr.sll_ifindex = cfg.ifindex;
    addr.sll_halen = ETH_ALEN;
    std::memcpy(addr.sll_addr, cfg.frame.dst_mac.data(), ETH_ALEN);
    return addr;
}

bool stopped(const std::atomic<bool> *stop)
{
    return stop != nullptr && stop->load(std::memory_order_relaxed);
}

void send_mmsg(int fd, const SenderConfig &cfg, const std::vector<std::uint8_t> &frame,
               const std::atomic<bool> *stop, ThreadResult &res)
{
    const sockaddr_ll addr = dest_addr(cfg);
    BatchSend b;
    b.fd = fd;
    b.data = frame.data();
    b.len = frame.size();
    b.addr = &addr;
    b.addrlen = sizeof(addr);
    b.batch = cfg.batch;
    b.count = cfg.count;
    b.count_drops = cfg.count_drops;
    send_batches(b, stop, res);
}

struct Ring {
    std::size_t frame_size = 0;
    std::size_t frames_per_block = 0;
    std::size_t block_size = 0;
    std::size_t frame_nr = 0;
    Mapping map;

    tpacket2_hdr *slot(std::size_t i) const
    {
        const std::size_t block = i / frames_per_block;
        const std::size_t off = block * block_size + (i % frames_per_block) * frame_size;
        return reinterpret_cast<tpacket2_hdr *>(map.data() + off);
    }
};

std::uint32_t load_status(const tpacket2_hdr *h)
{
    return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
}

void store_status(tpacket2_hdr *h, std::uint32_t v)
{
    __atomic_store_n(&h->tp_status, v, __ATOMIC_RELEASE);
}

// Data of a TX frame starts right after the aligned tpacket2_hdr.
constexpr std::size_t kTxDataOffset = TPACKET2_HDRLEN - sizeof(sockaddr_ll);

std::string setup_ring(int fd, const SenderConfig &cfg, std::size_t frame_len, Ring &ring)
{
    int ver = TPACKET_V2;
    if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &ver, sizeof(ver)) < 0)
        return errno_str("PACKET_VERSION", errno);
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    std::size_t fsz = TPACKET_ALIGNMENT;
    while (fsz < TPACKET_ALIGN(kTxDataOffset + frame_len))
        fsz *= 2;
    ring.frame_size = fsz;
    ring.block_size = fsz < page ? page : fsz;
    ring.frames_per_block = ring.block_size / fsz;
    const std::size_t want = cfg.ring_frames == 0 ? 1 : cfg.ring_frames;
    const std::size_t blocks = (want + ring.frames_per_block - 1) / ring.frames_per_block;
    ring.frame_nr = blocks * ring.frames_per_block;

    tpacket_req req{};
    req.tp_block_size = static_cast<unsigned>(ring.block_size);
    req.tp_block_nr = static_cast<unsigned>(blocks);
    req.tp_frame_size = static_cast<unsigned>(ring.frame_size);
    req.tp_frame_nr = static_cast<unsigned>(ring.frame_nr);
    if (setsockopt(fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)) < 0)
        return errno_str("PACKET_TX_RING", errno);
    if (!ring.map.map(fd, ring.block_size * blocks))
        return errno_str("mmap tx ring", errno);
    return {};
}

void send_ring(int fd, const SenderConfig &cfg, const Ring &ring,
               const std::vector<std::uint8_t> &frame, const std::atomic<bool> *stop,
               ThreadResult &res)
{
    const sockaddr_ll addr = dest_addr(cfg);
    const auto *sa = reinterpret_cast<const sockaddr *>(&addr);
    const unsigned batch = cfg.batch == 0 ? 1 : cfg.batch;
    for (std::size_t i = 0; i < ring.frame_nr; ++i) {
        auto *base = reinterpret_cast<std::uint8_t *>(ring.slot(i));
        std::memcpy(base + kTxDataOffset, frame.data(), frame.size());
    }

    // Returns false on a fatal error.
    auto kick = [&](bool wait) {
        while (true) {
            if (sendto(fd, nullptr, 0, wait ? 0 : MSG_DONTWAIT, sa, sizeof(addr)) >= 0)
                return true;
            if (!transient_send_error(errno)) {
                res.error = errno_str("sendto(tx ring)", errno);
                return false;
            }
            ++res.retries;
            if (!wait)
                return true;
            sched_yield();
        }
    };

    std::uint64_t queued = 0;
    std::size_t idx = 0;
    unsigned pending = 0;
    while (queued < cfg.count && !stopped(stop)) {
        tpacket2_hdr *h = ring.slot(idx);
        const std::uint32_t st = load_status(h);
        if (st & TP_STATUS_WRONG_FORMAT) {
            res.error = "kernel rejected a frame (TP_STATUS_WRONG_FORMAT)";
            return;
        }
        if (st != TP_STATUS_AVAILABLE) {
            if (!kick(true))
                return;
            pending = 0;
            continue;
        }
        h->tp_len = static_cast<std::uint32_t>(frame.size());
        store_status(h, TP_STATUS_SEND_REQUEST);
        idx = (idx + 1) % ring.frame_nr;
        ++queued;
        if (++pending >= batch) {
            if (!kick(false))
                return;
            pending = 0;
        }
    }

    // Flush and wait until the kernel has released every frame.
    std::uint64_t unsent = 0;
    for (int round = 0; round < 10000; ++round) {
        if (!kick(true))
            return;
        unsent = 0;
        for (std::size_t i = 0; i < ring.frame_nr; ++i) {
            const std::uint32_t st = load_status(ring.slot(i));
            if (st & TP_STATUS_WRONG_FORMAT) {
                res.error = "kernel rejected a frame (TP_STATUS_WRONG_FORMAT)";
                return;
            }
            if (st != TP_STATUS_AVAILABLE)
                ++unsent;
        }
        if (unsent == 0)
            break;
        sched_yield();
    }
    res.sent = queued - unsent;
    if (unsent != 0)
        res.error = std::to_string(unsent) + " frames still owned by the kernel";
}

// Runs on a thread of run_pinned_threads(): sets up, calls start(), then sends.
void sender_body(const SenderConfig &cfg, std::size_t index, const std::atomic<bool> *stop,
                 const std::function<void()> &start, ThreadResult &res)
{
    auto fail = [&](std::string msg) {
        res.error = std::move(msg);
    };

    std::vector<std::uint8_t> frame;
    try {
        FrameSpec fs = cfg.frame;
        fs.src_port = static_cast<std::uint16_t>(fs.src_port + index);
        frame = build_frame(fs);
    } catch (const std::exception &e) {
        return fail(e.what());
    }

    Fd fd(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        return fail(errno_str("socket(AF_PACKET)", errno));
    const int bypass = cfg.qdisc_bypass ? 1 : 0;
    if (setsockopt(fd.get(), SOL_PACKET, PACKET_QDISC_BYPASS, &bypass, sizeof(bypass)) < 0)
        return fail(errno_str("PACKET_QDISC_BYPASS", errno));
    // Protocol 0: bound for sending only, no receive hook.
    sockaddr_ll local{};
    local.sll_family = AF_PACKET;
    local.sll_ifindex = cfg.ifindex;
    if (bind(fd.get(), reinterpret_cast<const sockaddr *>(&local), sizeof(local)) < 0)
        return fail(errno_str("bind(AF_PACKET)", errno));

    Ring ring;
    if (cfg.mode == TxMode::tx_ring) {
        if (std::string err = setup_ring(fd.get(), cfg, frame.size(), ring); !err.empty())
            return fail(err);
    }

    start();
    if (cfg.mode == TxMode::tx_ring)
        send_ring(fd.get(), cfg, ring, frame, stop, res);
    else
        send_mmsg(fd.get(), cfg, frame, stop, res);
}

std::vector<int> read_cpu_file(const char *path)
{
    std::ifstream in(path);
    std::string line;
    if (!in || !std::getline(in, line))
        return {};
    return parse_cpu_list(line).value_or(std::vector<int>{});
}

} // namespace

std::uint16_t inet_checksum(const void *data, std::size_t len)
{
    const auto *p = static_cast<const std::uint8_t *>(data);
    std::uint32_t sum = 0;
    for (std::size_t i = 0; i + 1 < len; i += 2)
        sum += static_cast<std::uint32_t>(p[i] << 8 | p[i + 1]);
    if (len % 2 != 0)
        sum += static_cast<std::uint32_t>(p[len - 1] << 8);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}

std::vector<std::uint8_t> build_frame(const FrameSpec &spec)
{
    if (spec.frame_len < kMinFrameLen || spec.frame_len > kMaxFrameLen)
        throw std::invalid_argument("frame length " + std::to_string(spec.frame_len) +
                                    " outside [" + std::to_string(kMinFrameLen) + ", " +
                                    std::to_string(kMaxFrameLen) + "]");
    std::vector<std::uint8_t> f(spec.frame_len);
    std::uint8_t *eth = f.data();
    std::memcpy(eth, spec.dst_mac.data(), 6);
    std::memcpy(eth + 6, spec.src_mac.data(), 6);
    put16(eth + 12, ETH_P_IP);

    std::uint8_t *ip = eth + kEthHdrLen;
    ip[0] = 0x45; // IPv4, 5 words
    ip[1] = 0;
    put16(ip + 2, static_cast<std::uint16_t>(spec.frame_len - kEthHdrLen));
    put16(ip + 4, 0);      // id
    put16(ip + 6, 0x4000); // DF
    ip[8] = spec.ttl;
    ip[9] = 17; // UDP
    put32(ip + 12, spec.src_ip);
    put32(ip + 16, spec.dst_ip);
    put16(ip + 10, inet_checksum(ip, kIpv4HdrLen));

    std::uint8_t *udp = ip + kIpv4HdrLen;
    put16(udp, spec.src_port);
    put16(udp + 2, spec.dst_port);
    put16(udp + 4, static_cast<std::uint16_t>(spec.frame_len - kEthHdrLen - kIpv4HdrLen));
    put16(udp + 6, 0); // no checksum

    for (std::size_t i = kMinFrameLen; i < f.size(); ++i)
        f[i] = static_cast<std::uint8_t>(i - kMinFrameLen);
    return f;
}

namespace {

std::vector<ThreadResult> run_senders_impl(const SenderConfig &cfg, const std::atomic<bool> *stop)
{
    return run_pinned_threads(
            cfg.cpus, [&](std::size_t index, const std::function<void()> &start,
                          ThreadResult &res) { sender_body(cfg, index, stop, start, res); });
}

} // namespace

std::vector<ThreadResult> run_senders(const SenderConfig &cfg)
{
    return run_senders_impl(cfg, nullptr);
}

std::vector<ThreadResult> run_senders(const SenderConfig &cfg, const std::atomic<bool> &stop)
{
    return run_senders_impl(cfg, &stop);
}

std::optional<std::vector<int>> parse_cpu_list(std::string_view list)
{
    std::vector<int> cpus;
    while (!list.empty() && (list.back() == '\n' || list.back() == ' '))
        list.remove_suffix(1);
    if (list.empty())
        return cpus;
    auto num = [](std::string_view s) -> std::optional<int> {
        int v = 0;
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || v < 0)
            return std::nullopt;
        return v;
    };
    std::size_t pos = 0;
    while (pos <= list.size()) {
        std::size_t comma = list.find(',', pos);
        if (comma == std::string_view::npos)
            comma = list.size();
        const std::string_view item = list.substr(pos, comma - pos);
        const std::size_t dash = item.find('-');
        const auto lo = num(item.substr(0, dash));
        const auto hi = dash == std::string_view::npos ? lo : num(item.substr(dash + 1));
        if (!lo || !hi || *hi < *lo)
            return std::nullopt;
        for (int c = *lo; c <= *hi; ++c)
            cpus.push_back(c);
        pos = comma + 1;
    }
    return cpus;
}

std::vector<int> possible_cpus()
{
    return read_cpu_file("/sys/devices/system/cpu/possible");
}

std::vector<int> online_cpus()
{
    return read_cpu_file("/sys/devices/system/cpu/online");
}

} // namespace netutil::pkt
