#include "udp_sender.hpp"

#include <cerrno>
#include <functional>
#include <string>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace mqbench {
namespace {

using netutil::pkt::errno_str;

bool transient(int err)
{
    // ECONNREFUSED: an ICMP error for an earlier datagram of this connected socket.
    return netutil::pkt::transient_send_error(err) || err == ECONNREFUSED;
}

void send_loop(int fd, const UdpConfig &cfg, const std::atomic<bool> &stop,
               netutil::pkt::ThreadResult &res)
{
    std::vector<std::uint8_t> payload(cfg.payload);
    for (std::size_t i = 0; i < payload.size(); ++i)
        payload[i] = static_cast<std::uint8_t>(i);
    netutil::pkt::BatchSend b;
    b.fd = fd;
    b.data = payload.data();
    b.len = payload.size();
    b.batch = cfg.batch;
    b.count = cfg.count;
    b.transient = transient;
    netutil::pkt::send_batches(b, &stop, res);
}

// Runs on a thread of run_pinned_threads(): sets up, calls start(), then sends.
void body(const UdpConfig &cfg, const std::atomic<bool> &stop, const std::function<void()> &start,
          netutil::pkt::ThreadResult &res)
{
    auto fail = [&](std::string msg) {
        res.error = std::move(msg);
    };
    const netutil::pkt::Fd fd(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0)
        return fail(errno_str("socket(AF_INET, SOCK_DGRAM)", errno));
    if (setsockopt(fd.get(), SOL_SOCKET, SO_BINDTODEVICE, cfg.dev.c_str(),
                   static_cast<socklen_t>(cfg.dev.size())) < 0)
        return fail(errno_str("SO_BINDTODEVICE " + cfg.dev, errno));
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(cfg.dst_port);
    dst.sin_addr.s_addr = htonl(cfg.dst_ip);
    if (connect(fd.get(), reinterpret_cast<const sockaddr *>(&dst), sizeof(dst)) < 0) {
        char ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &dst.sin_addr, ip, sizeof(ip));
        return fail(errno_str(std::string("connect ") + ip + ":" + std::to_string(cfg.dst_port) +
                                      " via " + cfg.dev,
                              errno) +
                    " (the device needs an IPv4 address and a route to the destination)");
    }

    start();
    send_loop(fd.get(), cfg, stop, res);
}

} // namespace

std::vector<netutil::pkt::ThreadResult> run_udp_senders(const UdpConfig &cfg,
                                                        const std::atomic<bool> &stop)
{
    return netutil::pkt::run_pinned_threads(
            cfg.cpus, [&](std::size_t, const std::function<void()> &start,
                          netutil::pkt::ThreadResult &res) { body(cfg, stop, start, res); });
}

} // namespace mqbench
