// RAII netlink sockets on libmnl with extended-ACK aware request/dump helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <libmnl/libmnl.h>
#include <linux/netlink.h>

namespace netutil::nl {

// Result of a netlink operation: err is a positive errno (0 on success); the rest is the
// kernel's extended ACK (NLMSGERR_ATTR_MSG, _OFFS, _MISS_TYPE) when it sent one.
struct Status {
    int err = 0;
    std::string extack{};
    std::optional<std::uint32_t> bad_attr_offset{};   // from the netlink header
    std::optional<std::uint32_t> missing_attr_type{}; // an attribute the request lacks
    bool answered = false; // the kernel's NLMSG_ERROR/NLMSG_DONE ended it (not a local error)
    unsigned replies = 0;  // data messages before it

    bool ok() const { return err == 0; }
    // "EINVAL (Invalid argument): <extack>", or "ok".
    std::string str() const;

    static Status from_errno(int e) { return Status{.err = e}; }
    static Status failed(int e, std::string why)
    {
        return Status{.err = e, .extack = std::move(why)};
    }
};

// The name of a positive errno ("EINVAL"), or "errno N".
std::string errno_name(int e);

// Fixed-size, zeroed message buffer. Attribute helpers throw std::length_error when full.
class Message {
public:
    explicit Message(std::size_t size = 16384);

    // Starts a new message (resets the buffer).
    nlmsghdr *start(std::uint16_t type, std::uint16_t flags);
    nlmsghdr *hdr() const { return reinterpret_cast<nlmsghdr *>(buf_.get()); }
    std::size_t capacity() const { return size_; }

    template <typename T>
    T *put_extra()
    {
        ensure(MNL_ALIGN(sizeof(T)));
        return static_cast<T *>(mnl_nlmsg_put_extra_header(hdr(), sizeof(T)));
    }

    void put_u8(std::uint16_t type, std::uint8_t v);
    void put_u16(std::uint16_t type, std::uint16_t v);
    void put_u32(std::uint16_t type, std::uint32_t v);
    void put_u64(std::uint16_t type, std::uint64_t v);
    void put_strz(std::uint16_t type, std::string_view s);
    void put_raw(std::uint16_t type, const void *data, std::size_t len);
    nlattr *nest_start(std::uint16_t type);
    void nest_end(nlattr *nest);

private:
    void ensure(std::size_t more) const;

    std::size_t size_;
    std::unique_ptr<std::uint64_t[]> buf_; // 8-byte aligned storage
};

// Called for each reply message that is not NLMSG_ERROR/DONE/NOOP.
using MsgCallback = std::function<void(const nlmsghdr *)>;

// Parses NLMSG_ERROR (ACK or error) and NLMSG_DONE messages, including extack TLVs.
Status parse_error_msg(const nlmsghdr *nlh);

class Socket {
public:
    // bus: NETLINK_ROUTE or NETLINK_GENERIC. Throws std::system_error on failure.
    explicit Socket(int bus);
    ~Socket();
    Socket(const Socket &) = delete;
    Socket &operator=(const Socket &) = delete;
    Socket(Socket &&other) noexcept;
    Socket &operator=(Socket &&other) noexcept;

    int bus() const { return bus_; }
    std::uint32_t portid() const { return portid_; }
    mnl_socket *raw() const { return sock_; }

    // Sends nlh with NLM_F_ACK and waits for the ACK. Replies before it go to cb.
    Status request(nlmsghdr *nlh, const MsgCallback &cb = {});
    // Sends nlh with NLM_F_DUMP and feeds every reply to cb until NLMSG_DONE.
    Status dump(nlmsghdr *nlh, const MsgCallback &cb);
    // The raw mode, for malformed requests: sends nlh byte for byte as built (nlmsg_len
    // included, even where it lies about the payload; only seq and pid are set, and
    // NLM_F_DUMP or NLM_F_ACK added) and collects the replies up to the ACK or DONE.
    // request() and dump() are this mode on well-formed messages.
    Status send_as_is(nlmsghdr *nlh, bool dump, const MsgCallback &cb = {});
    // A receive that waits longer fails with ETIMEDOUT (a kernel that never answers).
    void set_receive_timeout(int seconds);
    // NETLINK_GET_STRICT_CHK: dump requests are checked as strictly as others.
    void set_strict_check(bool on);

private:
    Status send(nlmsghdr *nlh);
    Status receive_until_done(std::uint32_t seq, const MsgCallback &cb);
    void close();

    mnl_socket *sock_ = nullptr;
    int bus_ = 0;
    std::uint32_t portid_ = 0;
    std::uint32_t seq_ = 0;
};

// Attribute access. The libmnl iteration macros do not compile as C++ (void * conversions),
// so these wrap mnl_attr_ok()/mnl_attr_next() instead.
template <typename F>
void for_each_attr(const void *begin, std::size_t len, F &&fn)
{
    const auto *attr = static_cast<const nlattr *>(begin);
    const auto *end = static_cast<const char *>(begin) + len;
    while (mnl_attr_ok(attr, static_cast<int>(end - reinterpret_cast<const char *>(attr)))) {
        fn(attr);
        attr = mnl_attr_next(attr);
    }
}

// Attributes of nlh starting offset bytes after the netlink header (the family header size).
template <typename F>
void for_each_attr(const nlmsghdr *nlh, std::size_t offset, F &&fn)
{
    const std::size_t payload_len = mnl_nlmsg_get_payload_len(nlh);
    offset = MNL_ALIGN(offset);
    if (offset > payload_len)
        return;
    for_each_attr(mnl_nlmsg_get_payload_offset(nlh, offset), payload_len - offset,
                  std::forward<F>(fn));
}

template <typename F>
void for_each_nested(const nlattr *nest, F &&fn)
{
    for_each_attr(mnl_attr_get_payload(nest), mnl_attr_get_payload_len(nest), std::forward<F>(fn));
}

// Table indexed by attribute type (NLA_F_* flags stripped); types above max_type are ignored.
using AttrTable = std::vector<const nlattr *>;
AttrTable parse_attrs(const nlmsghdr *nlh, std::size_t offset, std::uint16_t max_type);
AttrTable parse_nested(const nlattr *nest, std::uint16_t max_type);

// Typed getters; nullopt when absent or too short.
std::optional<std::uint8_t> attr_u8(const AttrTable &tb, std::uint16_t type);
std::optional<std::uint16_t> attr_u16(const AttrTable &tb, std::uint16_t type);
std::optional<std::uint32_t> attr_u32(const AttrTable &tb, std::uint16_t type);
std::optional<std::uint64_t> attr_u64(const AttrTable &tb, std::uint16_t type);
// NLA_UINT: 4 or 8 bytes.
std::optional<std::uint64_t> attr_uint(const AttrTable &tb, std::uint16_t type);
std::optional<std::string> attr_str(const AttrTable &tb, std::uint16_t type);
// Copies min(payload, sizeof(T)) bytes into a zeroed T.
template <typename T>
std::optional<T> attr_struct(const AttrTable &tb, std::uint16_t type)
{
    if (type >= tb.size() || tb[type] == nullptr)
        return std::nullopt;
    T out{};
    const std::size_t len = mnl_attr_get_payload_len(tb[type]);
    std::memcpy(&out, mnl_attr_get_payload(tb[type]), len < sizeof(T) ? len : sizeof(T));
    return out;
}

// Resolves a generic netlink family name (CTRL_CMD_GETFAMILY) to its id.
Status genl_family_id(Socket &sock, std::string_view name, std::uint16_t &id);

// A generic netlink family on a socket of its own. The id is resolved on first use and
// kept (a failed lookup is tried again next time).
class GenlFamily {
public:
    // Opens a generic netlink socket; throws std::system_error on failure.
    explicit GenlFamily(std::string name) : sock_(NETLINK_GENERIC), name_(std::move(name)) {}

    // The family id; ENOENT if the kernel lacks the family.
    Status id(std::uint16_t &out);
    Socket &socket() { return sock_; }
    const std::string &name() const { return name_; }

private:
    Socket sock_;
    std::string name_;
    std::uint16_t id_ = 0;
};

// Starts a generic netlink message: nlmsghdr + genlmsghdr.
nlmsghdr *genl_start(Message &msg, std::uint16_t family, std::uint8_t cmd, std::uint8_t version,
                     std::uint16_t flags);

} // namespace netutil::nl
