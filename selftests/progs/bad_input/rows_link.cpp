// Rows: rtnetlink links (new, delete, strict dumps).
#include <cstring>

#include <linux/if.h>

#include "bad_input.hpp"

namespace bad_input {

const std::vector<Row> kLinkRows = {
        // rtnetlink: new links.
        {"newlink.txq_zero", "`ip link add NAME numtxqueues 0 type dummy`", kHowNewlink,
         error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink_queues(0, std::nullopt);
         }},
        {"newlink.txq_4097", "`ip link add NAME numtxqueues 4097 type dummy`", kHowNewlink,
         error(EINVAL, kTxQueuesMsg), error(EINVAL, kTxQueuesMsg), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink_queues(4097, std::nullopt);
         }},
        {"newlink.rxq_zero", "`ip link add NAME numrxqueues 0 type dummy`", kHowNewlink,
         error(EINVAL, kRxQueuesMsg), error(EINVAL, kRxQueuesMsg), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink_queues(std::nullopt, 0);
         }},
        {"newlink.rxq_4097", "`ip link add NAME numrxqueues 4097 type dummy`", kHowNewlink,
         error(EINVAL, kRxQueuesMsg), error(EINVAL, kRxQueuesMsg), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink_queues(std::nullopt, 4097);
         }},
        {"newlink.txq_short", "new dummy with a 2-byte IFLA_NUM_TX_QUEUES (wrong length)",
         kHowNewlink, error_at(ERANGE, kPolicyFailed, "IFLA_NUM_TX_QUEUES"),
         error_at(ERANGE, kPolicyFailed, "IFLA_NUM_TX_QUEUES"), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink(testdev::unique_name("bn"), [](Request &r) {
                 const std::uint16_t four = 4;
                 r.mark = tail(r);
                 r.msg.put_raw(IFLA_NUM_TX_QUEUES, &four, sizeof(four));
             });
         }},
        {"newlink.txq_long", "new dummy with an 8-byte IFLA_NUM_TX_QUEUES holding 2 (wrong length)",
         kHowNewlink,
         accepted("rtnetlink parses NEWLINK liberally: the first 4 bytes are used, a dummy "
                  "with 2 TX queues is created"),
         accepted("as on the patched kernel"),
         "the new dummy has 2 TX queues; after removing it, all unchanged", Where::init,
         [](Env &, const Fix &) {
             Request r = newlink(testdev::unique_name("bn"), [](Request &q) {
                 const std::uint64_t two = 2;
                 q.msg.put_raw(IFLA_NUM_TX_QUEUES, &two, sizeof(two));
             });
             r.value = 2;
             return r;
         },
         nullptr, link_created},
        {"newlink.unknown_attr", "new dummy plus attribute type 1000 (above IFLA_MAX)", kHowNewlink,
         accepted("RTM_NEWLINK is not strictly validated: unknown attributes are ignored"),
         accepted("as on the patched kernel"),
         "the new dummy has 1 TX queue; after removing it, all unchanged", Where::init,
         [](Env &, const Fix &) {
             Request r = newlink(testdev::unique_name("bn"),
                                 [](Request &q) { q.msg.put_u32(1000, 1); });
             r.value = 1;
             return r;
         },
         nullptr, link_created},
        {"newlink.unknown_kind", "`ip link add NAME type nosuchkind`", kHowNewlink,
         error(EOPNOTSUPP, "Unknown device type"), error(EOPNOTSUPP, "Unknown device type"),
         kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             rtnl::start_link_msg(r.msg, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
             r.created = testdev::unique_name("bn");
             r.msg.put_strz(IFLA_IFNAME, r.created);
             nlattr *li = r.msg.nest_start(IFLA_LINKINFO);
             r.msg.put_strz(IFLA_INFO_KIND, "nosuchkind");
             r.msg.nest_end(li);
             return r;
         }},
        {"newlink.ifname_too_long", "new dummy named with 16 characters", kHowNewlink,
         error_at(ERANGE, kPolicyFailed, "IFLA_IFNAME"),
         error_at(ERANGE, kPolicyFailed, "IFLA_IFNAME"), kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             rtnl::start_link_msg(r.msg, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
             r.mark = tail(r);
             r.msg.put_strz(IFLA_IFNAME, "bad_input_16char");
             nlattr *li = r.msg.nest_start(IFLA_LINKINFO);
             r.msg.put_strz(IFLA_INFO_KIND, testdev::kDummyKind);
             r.msg.nest_end(li);
             return r;
         }},
        {"newlink.address_short", "new dummy with a 5-byte IFLA_ADDRESS", kHowNewlink,
         error(EINVAL), error(EINVAL), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink(testdev::unique_name("bn"), [](Request &r) {
                 const std::uint8_t mac[5] = {0x02, 0, 0, 0, 1};
                 r.msg.put_raw(IFLA_ADDRESS, mac, sizeof(mac));
             });
         }},
        {"newlink.address_multicast", "new dummy with address 01:00:5e:00:00:01", kHowNewlink,
         error(EADDRNOTAVAIL), error(EADDRNOTAVAIL), kAllState, Where::init,
         [](Env &, const Fix &) {
             return newlink(testdev::unique_name("bn"), [](Request &r) {
                 const std::uint8_t mac[6] = {0x01, 0x00, 0x5e, 0, 0, 1};
                 r.msg.put_raw(IFLA_ADDRESS, mac, sizeof(mac));
             });
         }},
        {"newlink.negative_ifindex", "new dummy with ifi_index -1", kHowNewlink,
         error(EINVAL, "ifindex can't be negative"), error(EINVAL, "ifindex can't be negative"),
         kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r = newlink(testdev::unique_name("bn"));
             auto *ifm = static_cast<ifinfomsg *>(mnl_nlmsg_get_payload(r.msg.hdr()));
             ifm->ifi_index = -1;
             return r;
         }},
        {"newlink.short_header", "RTM_NEWLINK with 4 bytes of payload (ifinfomsg is 16)",
         kHowNewlink, error(EINVAL, "Invalid header length"),
         error(EINVAL, "Invalid header length"), kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             rtnl::start_link_msg(r.msg, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
             r.msg.hdr()->nlmsg_len = NLMSG_HDRLEN + 4;
             return r;
         }},
        {"newlink.empty_payload", "RTM_NEWLINK with no payload at all", kHowNewlink,
         accepted("rtnetlink ignores a message shorter than struct rtgenmsg and acks it"),
         accepted("as on the patched kernel"), kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             r.msg.start(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL);
             return r;
         }},
        {"newlink.change_numtxqueues",
         "RTM_NEWLINK on the existing device with IFLA_NUM_TX_QUEUES 8 (no NLM_F_CREATE)",
         kHowNewlink, accepted("the allocated counts are fixed at creation; a change ignores them"),
         accepted("as on the patched kernel"), kAllState, Where::init,
         [](Env &, const Fix &f) {
             Request r;
             rtnl::start_link_msg(r.msg, RTM_NEWLINK, 0, f.ifindex);
             r.msg.put_u32(IFLA_NUM_TX_QUEUES, 8);
             r.msg.put_u32(IFLA_NUM_RX_QUEUES, 8);
             return r;
         }},
        {"dellink.unknown_name", "`ip link del NAME` for a name no device has",
         "rtnetlink RTM_DELLINK", error(ENODEV), error(ENODEV), kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             rtnl::start_link_msg(r.msg, RTM_DELLINK, 0);
             r.msg.put_strz(IFLA_IFNAME, testdev::unique_name("bx"));
             return r;
         }},
        {"getlink.strict_unknown_attr", "link dump with attribute type 1000",
         "rtnetlink RTM_GETLINK dump, NETLINK_GET_STRICT_CHK",
         error_at(EINVAL, kUnknownAttr, "type 1000"), error_at(EINVAL, kUnknownAttr, "type 1000"),
         kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             r.bus = Bus::rtnl_strict;
             r.dump = true;
             rtnl::start_link_msg(r.msg, RTM_GETLINK, 0);
             r.mark = tail(r);
             r.msg.put_u32(1000, 1);
             return r;
         }},
        {"getlink.strict_unsupported_attr", "link dump with IFLA_MTU (not a dump filter)",
         "rtnetlink RTM_GETLINK dump, NETLINK_GET_STRICT_CHK",
         error(EINVAL, "Unsupported attribute in link dump request"),
         error(EINVAL, "Unsupported attribute in link dump request"), kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r;
             r.bus = Bus::rtnl_strict;
             r.dump = true;
             rtnl::start_link_msg(r.msg, RTM_GETLINK, 0);
             r.msg.put_u32(IFLA_MTU, 1500);
             return r;
         }},
        {"getlink.strict_ifindex", "link dump with ifi_index set in the header",
         "rtnetlink RTM_GETLINK dump, NETLINK_GET_STRICT_CHK",
         error(EINVAL, "Filter by device index not supported for link dumps"),
         error(EINVAL, "Filter by device index not supported for link dumps"), kAllState,
         Where::init,
         [](Env &, const Fix &f) {
             Request r;
             r.bus = Bus::rtnl_strict;
             r.dump = true;
             rtnl::start_link_msg(r.msg, RTM_GETLINK, 0, f.ifindex);
             return r;
         }},

};

} // namespace bad_input
