#include "nl.hpp"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <system_error>
#include <vector>

#include <linux/genetlink.h>
#include <sys/socket.h>
#include <sys/time.h>

namespace netutil::nl {
namespace {

// Dump skbs are normally at most 32 KiB; twice that leaves headroom.
constexpr std::size_t kRecvBufSize = std::size_t{64} * 1024;

void parse_ack_tlvs(const nlmsghdr *nlh, std::size_t offset, Status &st)
{
    const auto *payload = static_cast<const char *>(mnl_nlmsg_get_payload(nlh));
    const std::size_t payload_len = mnl_nlmsg_get_payload_len(nlh);
    offset = MNL_ALIGN(offset);
    if (offset >= payload_len)
        return;
    std::size_t pos = offset;
    while (payload_len - pos >= sizeof(nlattr)) {
        nlattr attr{};
        std::memcpy(&attr, payload + pos, sizeof(attr));
        if (attr.nla_len < sizeof(nlattr) || attr.nla_len > payload_len - pos)
            break;
        const char *data = payload + pos + MNL_ATTR_HDRLEN;
        const std::size_t data_len = attr.nla_len - MNL_ATTR_HDRLEN;
        switch (attr.nla_type & NLA_TYPE_MASK) {
        case NLMSGERR_ATTR_MSG:
            st.extack.assign(data, strnlen(data, data_len));
            break;
        case NLMSGERR_ATTR_OFFS:
        case NLMSGERR_ATTR_MISS_TYPE:
            if (data_len >= sizeof(std::uint32_t)) {
                std::uint32_t v = 0;
                std::memcpy(&v, data, sizeof(v));
                ((attr.nla_type & NLA_TYPE_MASK) == NLMSGERR_ATTR_OFFS ? st.bad_attr_offset
                                                                       : st.missing_attr_type) = v;
            }
            break;
        default:
            break;
        }
        pos += MNL_ALIGN(attr.nla_len);
    }
}

} // namespace

std::string errno_name(int e)
{
    const char *n = strerrorname_np(e);
    return n != nullptr ? std::string(n) : "errno " + std::to_string(e);
}

std::string Status::str() const
{
    if (err == 0)
        return extack.empty() ? std::string("ok") : "ok (" + extack + ")";
    std::string s = errno_name(err);
    s += " (";
    s += std::strerror(err);
    s += ")";
    if (!extack.empty())
        s += ": " + extack;
    return s;
}

Message::Message(std::size_t size)
    : size_(MNL_ALIGN(size)), buf_(std::make_unique<std::uint64_t[]>(
                                      (size_ + sizeof(std::uint64_t) - 1) / sizeof(std::uint64_t)))
{
    if (size_ < MNL_NLMSG_HDRLEN)
        throw std::invalid_argument("netlink message buffer too small");
}

nlmsghdr *Message::start(std::uint16_t type, std::uint16_t flags)
{
    std::memset(buf_.get(), 0, size_);
    nlmsghdr *nlh = mnl_nlmsg_put_header(buf_.get());
    nlh->nlmsg_type = type;
    nlh->nlmsg_flags = NLM_F_REQUEST | flags;
    return nlh;
}

void Message::ensure(std::size_t more) const
{
    if (hdr()->nlmsg_len + more > size_)
        throw std::length_error("netlink message buffer full");
}

void Message::put_u8(std::uint16_t type, std::uint8_t v)
{
    if (!mnl_attr_put_u8_check(hdr(), size_, type, v))
        throw std::length_error("netlink message buffer full");
}

void Message::put_u16(std::uint16_t type, std::uint16_t v)
{
    if (!mnl_attr_put_u16_check(hdr(), size_, type, v))
        throw std::length_error("netlink message buffer full");
}

void Message::put_u32(std::uint16_t type, std::uint32_t v)
{
    if (!mnl_attr_put_u32_check(hdr(), size_, type, v))
        throw std::length_error("netlink message buffer full");
}

void Message::put_u64(std::uint16_t type, std::uint64_t v)
{
    if (!mnl_attr_put_u64_check(hdr(), size_, type, v))
        throw std::length_error("netlink message buffer full");
}

void Message::put_strz(std::uint16_t type, std::string_view s)
{
    const std::string tmp(s);
    if (!mnl_attr_put_strz_check(hdr(), size_, type, tmp.c_str()))
        throw std::length_error("netlink message buffer full");
}

void Message::put_raw(std::uint16_t type, const void *data, std::size_t len)
{
    if (len > UINT16_MAX - MNL_ATTR_HDRLEN)
        throw std::length_error("netlink attribute too long");
    if (!mnl_attr_put_check(hdr(), size_, type, len, data))
        throw std::length_error("netlink message buffer full");
}

nlattr *Message::nest_start(std::uint16_t type)
{
    nlattr *nest = mnl_attr_nest_start_check(hdr(), size_, type);
    if (nest == nullptr)
        throw std::length_error("netlink message buffer full");
    return nest;
}

void Message::nest_end(nlattr *nest)
{
    mnl_attr_nest_end(hdr(), nest);
}

Status parse_error_msg(const nlmsghdr *nlh)
{
    Status st;
    st.answered = true;
    const std::size_t payload_len = mnl_nlmsg_get_payload_len(nlh);
    const void *payload = mnl_nlmsg_get_payload(nlh);

    if (nlh->nlmsg_type == NLMSG_ERROR) {
        if (payload_len < sizeof(nlmsgerr)) {
            st.err = EBADMSG;
            return st;
        }
        nlmsgerr e{};
        std::memcpy(&e, payload, sizeof(e));
        st.err = -e.error;
        if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) == 0)
            return st;
        std::size_t offset = sizeof(nlmsgerr);
        if ((nlh->nlmsg_flags & NLM_F_CAPPED) == 0 && e.msg.nlmsg_len >= sizeof(nlmsghdr))
            offset += MNL_ALIGN(e.msg.nlmsg_len - sizeof(nlmsghdr));
        parse_ack_tlvs(nlh, offset, st);
        return st;
    }
    if (nlh->nlmsg_type == NLMSG_DONE) {
        if (payload_len < sizeof(int))
            return st;
        int err = 0;
        std::memcpy(&err, payload, sizeof(err));
        st.err = -err;
        if ((nlh->nlmsg_flags & NLM_F_ACK_TLVS) != 0)
            parse_ack_tlvs(nlh, sizeof(int), st);
        return st;
    }
    return Status::from_errno(EBADMSG);
}

Socket::Socket(int bus) : bus_(bus)
{
    sock_ = mnl_socket_open(bus);
    if (sock_ == nullptr)
        throw std::system_error(errno, std::generic_category(), "mnl_socket_open");
    if (mnl_socket_bind(sock_, 0, MNL_SOCKET_AUTOPID) < 0) {
        const int e = errno;
        close();
        throw std::system_error(e, std::generic_category(), "mnl_socket_bind");
    }
    int one = 1;
    // Both are best effort: old kernels simply send no extack / full echo.
    mnl_socket_setsockopt(sock_, NETLINK_EXT_ACK, &one, sizeof(one));
    mnl_socket_setsockopt(sock_, NETLINK_CAP_ACK, &one, sizeof(one));
    portid_ = mnl_socket_get_portid(sock_);
    seq_ = static_cast<std::uint32_t>(std::time(nullptr));
}

Socket::~Socket()
{
    close();
}

Socket::Socket(Socket &&other) noexcept
    : sock_(other.sock_), bus_(other.bus_), portid_(other.portid_), seq_(other.seq_)
{
    other.sock_ = nullptr;
}

Socket &Socket::operator=(Socket &&other) noexcept
{
    if (this != &other) {
        close();
        sock_ = other.sock_;
        bus_ = other.bus_;
        portid_ = other.portid_;
        seq_ = other.seq_;
        other.sock_ = nullptr;
    }
    return *this;
}

void Socket::close()
{
    if (sock_ != nullptr) {
        mnl_socket_close(sock_);
        sock_ = nullptr;
    }
}

Status Socket::send(nlmsghdr *nlh)
{
    if (sock_ == nullptr)
        return Status::from_errno(EBADF);
    nlh->nlmsg_seq = ++seq_;
    nlh->nlmsg_pid = 0;
    if (mnl_socket_sendto(sock_, nlh, nlh->nlmsg_len) < 0)
        return Status::from_errno(errno);
    return {};
}

Status Socket::receive_until_done(std::uint32_t seq, const MsgCallback &cb)
{
    std::vector<char> buf(kRecvBufSize);
    unsigned replies = 0;
    while (true) {
        const ssize_t n = mnl_socket_recvfrom(sock_, buf.data(), buf.size());
        if (n < 0) {
            if (errno == EINTR)
                continue;
            // EAGAIN: the receive timeout (set_receive_timeout()) passed.
            Status st = Status::from_errno(errno == EAGAIN ? ETIMEDOUT : errno);
            st.replies = replies;
            return st;
        }
        int len = static_cast<int>(n);
        const auto *nlh = reinterpret_cast<const nlmsghdr *>(buf.data());
        for (; mnl_nlmsg_ok(nlh, len); nlh = mnl_nlmsg_next(nlh, &len)) {
            if (!mnl_nlmsg_portid_ok(nlh, portid_) || nlh->nlmsg_seq != seq)
                continue; // stale reply to an abandoned request
            switch (nlh->nlmsg_type) {
            case NLMSG_ERROR:
            case NLMSG_DONE: {
                Status st = parse_error_msg(nlh);
                st.replies = replies;
                return st;
            }
            case NLMSG_NOOP:
                break;
            case NLMSG_OVERRUN:
                return Status::from_errno(ENOBUFS);
            default:
                ++replies;
                if (cb)
                    cb(nlh);
                break;
            }
        }
    }
}

Status Socket::send_as_is(nlmsghdr *nlh, bool dump, const MsgCallback &cb)
{
    nlh->nlmsg_flags |= dump ? NLM_F_DUMP : NLM_F_ACK;
    if (Status st = send(nlh); !st.ok())
        return st;
    return receive_until_done(nlh->nlmsg_seq, cb);
}

Status Socket::request(nlmsghdr *nlh, const MsgCallback &cb)
{
    return send_as_is(nlh, false, cb);
}

Status Socket::dump(nlmsghdr *nlh, const MsgCallback &cb)
{
    return send_as_is(nlh, true, cb);
}

void Socket::set_receive_timeout(int seconds)
{
    timeval tv{seconds, 0};
    setsockopt(mnl_socket_get_fd(sock_), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

void Socket::set_strict_check(bool on)
{
    int v = on ? 1 : 0;
    mnl_socket_setsockopt(sock_, NETLINK_GET_STRICT_CHK, &v, sizeof(v));
}

namespace {

void add_to_table(AttrTable &tb, const nlattr *attr)
{
    const std::uint16_t type = mnl_attr_get_type(attr);
    if (type < tb.size())
        tb[type] = attr;
}

template <typename T>
std::optional<T> fixed(const AttrTable &tb, std::uint16_t type)
{
    if (type >= tb.size() || tb[type] == nullptr || mnl_attr_get_payload_len(tb[type]) < sizeof(T))
        return std::nullopt;
    T v{};
    std::memcpy(&v, mnl_attr_get_payload(tb[type]), sizeof(T));
    return v;
}

} // namespace

AttrTable parse_attrs(const nlmsghdr *nlh, std::size_t offset, std::uint16_t max_type)
{
    AttrTable tb(static_cast<std::size_t>(max_type) + 1, nullptr);
    for_each_attr(nlh, offset, [&](const nlattr *a) { add_to_table(tb, a); });
    return tb;
}

AttrTable parse_nested(const nlattr *nest, std::uint16_t max_type)
{
    AttrTable tb(static_cast<std::size_t>(max_type) + 1, nullptr);
    for_each_nested(nest, [&](const nlattr *a) { add_to_table(tb, a); });
    return tb;
}

std::optional<std::uint8_t> attr_u8(const AttrTable &tb, std::uint16_t type)
{
    return fixed<std::uint8_t>(tb, type);
}

std::optional<std::uint16_t> attr_u16(const AttrTable &tb, std::uint16_t type)
{
    return fixed<std::uint16_t>(tb, type);
}

std::optional<std::uint32_t> attr_u32(const AttrTable &tb, std::uint16_t type)
{
    return fixed<std::uint32_t>(tb, type);
}

std::optional<std::uint64_t> attr_u64(const AttrTable &tb, std::uint16_t type)
{
    return fixed<std::uint64_t>(tb, type);
}

std::optional<std::uint64_t> attr_uint(const AttrTable &tb, std::uint16_t type)
{
    if (type >= tb.size() || tb[type] == nullptr)
        return std::nullopt;
    if (mnl_attr_get_payload_len(tb[type]) >= sizeof(std::uint64_t))
        return fixed<std::uint64_t>(tb, type);
    return fixed<std::uint32_t>(tb, type);
}

std::optional<std::string> attr_str(const AttrTable &tb, std::uint16_t type)
{
    if (type >= tb.size() || tb[type] == nullptr)
        return std::nullopt;
    const auto *p = static_cast<const char *>(mnl_attr_get_payload(tb[type]));
    return std::string(p, strnlen(p, mnl_attr_get_payload_len(tb[type])));
}

nlmsghdr *genl_start(Message &msg, std::uint16_t family, std::uint8_t cmd, std::uint8_t version,
                     std::uint16_t flags)
{
    nlmsghdr *nlh = msg.start(family, flags);
    auto *g = msg.put_extra<genlmsghdr>();
    g->cmd = cmd;
    g->version = version;
    return nlh;
}

Status genl_family_id(Socket &sock, std::string_view name, std::uint16_t &id)
{
    Message msg(1024);
    nlmsghdr *nlh = genl_start(msg, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1, 0);
    msg.put_strz(CTRL_ATTR_FAMILY_NAME, name);
    bool found = false;
    Status st = sock.request(nlh, [&](const nlmsghdr *reply) {
        const AttrTable tb = parse_attrs(reply, sizeof(genlmsghdr), CTRL_ATTR_MAX);
        if (auto v = attr_u16(tb, CTRL_ATTR_FAMILY_ID)) {
            id = *v;
            found = true;
        }
    });
    if (st.ok() && !found)
        return Status::from_errno(ENOENT);
    return st;
}

Status GenlFamily::id(std::uint16_t &out)
{
    if (id_ == 0) {
        std::uint16_t found = 0;
        if (Status st = genl_family_id(sock_, name_, found); !st.ok())
            return st;
        id_ = found;
    }
    out = id_;
    return {};
}

} // namespace netutil::nl
