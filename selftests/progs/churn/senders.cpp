#include "senders.hpp"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "sender_common.hpp"

namespace churn {

std::string Senders::run(std::size_t i, const std::function<void()> &start)
{
    Thread &t = threads_[i];
    auto setup_failed = [&](std::string err) {
        failed_.fetch_add(1);
        return err;
    };
    pkt::FrameSpec spec;
    spec.frame_len = kFrameLen;
    spec.src_port = static_cast<std::uint16_t>(spec.src_port + i); // a flow per sender
    const std::vector<std::uint8_t> frame = pkt::build_frame(spec);
    const pkt::Fd fd(socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        return setup_failed(pkt::errno_str("socket(AF_PACKET)", errno));
    // A send waiting for socket memory gives up after a second, so that a pause is
    // never held up for long.
    const timeval tv{1, 0};
    if (setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
        return setup_failed(pkt::errno_str("SO_SNDTIMEO", errno));
    // Protocol 0: bound for sending only.
    sockaddr_ll local{};
    local.sll_family = AF_PACKET;
    local.sll_ifindex = ifindex_;
    if (bind(fd.get(), reinterpret_cast<const sockaddr *>(&local), sizeof(local)) < 0)
        return setup_failed(pkt::errno_str("bind(AF_PACKET)", errno));
    sockaddr_ll dst{};
    dst.sll_family = AF_PACKET;
    dst.sll_protocol = htons(ETH_P_IP);
    dst.sll_ifindex = ifindex_;
    dst.sll_halen = ETH_ALEN;
    std::memcpy(dst.sll_addr, spec.dst_mac.data(), ETH_ALEN);

    alive_.fetch_add(1);
    ready_.fetch_add(1);
    start();
    std::string err;
    while (true) {
        const int m = mode_.load();
        if (m == kStop)
            break;
        if (m == kHold) {
            parked_.fetch_add(1);
            mode_.wait(kHold);
            parked_.fetch_sub(1);
            continue;
        }
        const ssize_t n = sendto(fd.get(), frame.data(), frame.size(), 0,
                                 reinterpret_cast<const sockaddr *>(&dst), sizeof(dst));
        if (n >= 0) {
            t.sent.fetch_add(1, std::memory_order_relaxed);
            continue;
        }
        const int e = errno;
        if (e == ENOBUFS) {
            t.nobufs.fetch_add(1, std::memory_order_relaxed);
        } else if (e == ENETDOWN) {
            t.netdown.fetch_add(1, std::memory_order_relaxed);
        } else if (e == EAGAIN || e == EINTR) {
            t.again.fetch_add(1, std::memory_order_relaxed);
        } else {
            t.end_errno.store(e);
            // The control thread announces the deletion before it sends RTM_DELLINK.
            if ((e != ENXIO && e != ENODEV) || mode_.load() != kDeleting)
                err = pkt::errno_str("sendto", e);
            break;
        }
    }
    alive_.fetch_sub(1);
    return err;
}

} // namespace churn
