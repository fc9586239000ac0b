// Rows: ethtool channels (`ethtool -L`) and malformed ethtool requests.
#include "bad_input.hpp"

namespace bad_input {

const std::vector<Row> kChannelRows = {
        // ethtool -L: argument checks of the ethtool core, reached only with the
        // driver's get_channels/set_channels.
        {"channels.tx_zero", "`ethtool -L DEV tx 0`", kHowChannels,
         error_at(EINVAL, kNoChannel, kTxAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 0}},
                                 ETHTOOL_A_CHANNELS_TX_COUNT);
         }},
        {"channels.rx_zero", "`ethtool -L DEV rx 0`", kHowChannels,
         error_at(EINVAL, kNoChannel, kRxAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_RX_COUNT, 0}},
                                 ETHTOOL_A_CHANNELS_RX_COUNT);
         }},
        {"channels.tx_above_max", "`ethtool -L DEV tx 5` (4 TX queues)", kHowChannels,
         error_at(EINVAL, kExceedsMax, kTxAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, kTxQueues + 1}},
                                 ETHTOOL_A_CHANNELS_TX_COUNT);
         }},
        {"channels.tx_u32_max", "`ethtool -L DEV tx 4294967295`", kHowChannels,
         error_at(EINVAL, kExceedsMax, kTxAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 0xffffffffU}},
                                 ETHTOOL_A_CHANNELS_TX_COUNT);
         }},
        {"channels.rx_above_max", "`ethtool -L DEV rx 2` (1 RX queue)", kHowChannels,
         error_at(EINVAL, kExceedsMax, kRxAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_RX_COUNT, kRxQueues + 1}},
                                 ETHTOOL_A_CHANNELS_RX_COUNT);
         }},
        {"channels.combined", "`ethtool -L DEV combined 1` (no combined channels)", kHowChannels,
         error_at(EINVAL, kExceedsMax, kCombinedAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_COMBINED_COUNT, 1}},
                                 ETHTOOL_A_CHANNELS_COMBINED_COUNT);
         }},
        {"channels.other", "`ethtool -L DEV other 1` (no other channels)", kHowChannels,
         error_at(EINVAL, kExceedsMax, kOtherAttr), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_OTHER_COUNT, 1}},
                                 ETHTOOL_A_CHANNELS_OTHER_COUNT);
         }},
        {"channels.tx_zero_combined_zero", "`ethtool -L DEV tx 0 combined 0` (combined was 0)",
         kHowChannels, error_at(EINVAL, kNoChannel, kTxAttr), kNoChannelsOps, kAllState,
         Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(
                     e, f.name,
                     {{ETHTOOL_A_CHANNELS_TX_COUNT, 0}, {ETHTOOL_A_CHANNELS_COMBINED_COUNT, 0}},
                     ETHTOOL_A_CHANNELS_TX_COUNT);
         }},
        {"channels.nothing_to_change", "CHANNELS_SET with a header and no count", kHowChannels,
         accepted("nothing to change, no notification"), kNoChannelsOps, kAllState, Where::init,
         [](Env &e, const Fix &f) {
             return channels_set(e, f.name, {});
         }},
        // Malformed ethtool requests: the policy is checked before the driver is
        // asked, so both kernels answer alike.
        {"channels.no_header", "CHANNELS_SET tx 2 without ETHTOOL_A_CHANNELS_HEADER", kHowEthtool,
         error_missing(EINVAL, kHeaderAttr, ETHTOOL_A_CHANNELS_HEADER),
         error_missing(EINVAL, kHeaderAttr, ETHTOOL_A_CHANNELS_HEADER), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"channels.header_empty", "CHANNELS_SET tx 2, header with neither index nor name",
         kHowEthtool, error_at(EINVAL, "neither ifindex nor name specified", kHeaderAttr),
         error_at(EINVAL, "neither ifindex nor name specified", kHeaderAttr), kAllState,
         Where::init,
         [](Env &e, const Fix &) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             r.mark = tail(r);
             r.msg.nest_end(r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER));
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"channels.unknown_device", "CHANNELS_SET tx 2 on a name no device has", kHowEthtool,
         error_at(ENODEV, "no device matches name", kDevNameAttr),
         error_at(ENODEV, "no device matches name", kDevNameAttr), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
             r.mark = tail(r);
             r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, testdev::unique_name("bx"));
             r.msg.nest_end(h);
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"channels.ifindex_name_mismatch",
         "CHANNELS_SET tx 2, header with the device's index and the name `lo`", kHowEthtool,
         error_at(ENODEV, "ifindex and name do not match", kHeaderAttr),
         error_at(ENODEV, "ifindex and name do not match", kHeaderAttr), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             r.mark = tail(r);
             nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
             r.msg.put_u32(ETHTOOL_A_HEADER_DEV_INDEX, static_cast<std::uint32_t>(f.ifindex));
             r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, "lo");
             r.msg.nest_end(h);
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"channels.tx_count_short", "CHANNELS_SET with a 2-byte TX_COUNT (wrong length)",
         kHowEthtool, error_at(EINVAL, kBadLength, kTxAttr), error_at(EINVAL, kBadLength, kTxAttr),
         kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             put_header(r, f.name);
             const std::uint16_t two = 2;
             r.mark = tail(r);
             r.msg.put_raw(ETHTOOL_A_CHANNELS_TX_COUNT, &two, sizeof(two));
             return r;
         }},
        {"channels.unknown_attr", "CHANNELS_SET tx 2 plus attribute type 10 (above the maximum)",
         kHowEthtool, error_at(EINVAL, kUnknownAttr, "type 10"),
         error_at(EINVAL, kUnknownAttr, "type 10"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = channels_set(e, f.name, {{ETHTOOL_A_CHANNELS_TX_COUNT, 2}});
             r.mark = tail(r);
             r.msg.put_u32(ETHTOOL_A_CHANNELS_MAX + 1, 2);
             return r;
         }},
        {"channels.header_not_nested", "CHANNELS_SET tx 2, header without NLA_F_NESTED",
         kHowEthtool, error_at(EINVAL, "NLA_F_NESTED is missing", kHeaderAttr),
         error_at(EINVAL, "NLA_F_NESTED is missing", kHeaderAttr), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             const std::string name = f.name;
             const auto inner =
                     attr_bytes(ETHTOOL_A_HEADER_DEV_NAME, name.c_str(), name.size() + 1);
             r.mark = tail(r);
             r.msg.put_raw(ETHTOOL_A_CHANNELS_HEADER, inner.data(), inner.size());
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"channels.dev_name_not_string",
         "CHANNELS_SET tx 2, DEV_NAME of 4 bytes without a NUL (wrong type)", kHowEthtool,
         error_at(EINVAL, kPolicyFailed, kDevNameAttr),
         error_at(EINVAL, kPolicyFailed, kDevNameAttr), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
             r.mark = tail(r);
             r.msg.put_u32(ETHTOOL_A_HEADER_DEV_NAME, 0x64636261); // "abcd"
             r.msg.nest_end(h);
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"channels.header_flags_reserved",
         "CHANNELS_SET tx 2, header flags ETHTOOL_FLAG_STATS (not allowed here)", kHowEthtool,
         error_at(EINVAL, kReservedBit, "ETHTOOL_A_HEADER_FLAGS"),
         error_at(EINVAL, kReservedBit, "ETHTOOL_A_HEADER_FLAGS"), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             nlattr *h = r.msg.nest_start(ETHTOOL_A_CHANNELS_HEADER);
             r.msg.put_strz(ETHTOOL_A_HEADER_DEV_NAME, f.name);
             r.mark = tail(r);
             r.msg.put_u32(ETHTOOL_A_HEADER_FLAGS, ETHTOOL_FLAG_STATS);
             r.msg.nest_end(h);
             r.msg.put_u32(ETHTOOL_A_CHANNELS_TX_COUNT, 2);
             return r;
         }},
        {"ethtool.unknown_cmd", "ethtool family, command 200", kHowEthtool, error(EOPNOTSUPP),
         error(EOPNOTSUPP), kAllState, Where::init,
         [](Env &e, const Fix &f) {
             Request r = ethtool_msg(e, 200);
             put_header(r, f.name);
             return r;
         }},
        {"ethtool.short_genl_header", "ethtool family, 2 bytes of payload (no genlmsghdr)",
         kHowEthtool, error(EINVAL), error(EINVAL), kAllState, Where::init,
         [](Env &e, const Fix &) {
             Request r = ethtool_msg(e, ETHTOOL_MSG_CHANNELS_SET);
             r.msg.hdr()->nlmsg_len = NLMSG_HDRLEN + 2;
             return r;
         }},

};

} // namespace bad_input
