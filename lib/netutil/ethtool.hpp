// ethtool generic netlink: channel counts.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "nl.hpp"

namespace netutil::ethtool {

using nl::Status;

// Attributes the kernel omitted read as 0.
struct Channels {
    std::uint32_t rx_max = 0;
    std::uint32_t tx_max = 0;
    std::uint32_t other_max = 0;
    std::uint32_t combined_max = 0;
    std::uint32_t rx_count = 0;
    std::uint32_t tx_count = 0;
    std::uint32_t other_count = 0;
    std::uint32_t combined_count = 0;
};

// Only the counts that are set are sent.
struct ChannelsRequest {
    std::optional<std::uint32_t> rx;
    std::optional<std::uint32_t> tx;
    std::optional<std::uint32_t> other;
    std::optional<std::uint32_t> combined;
};

nlmsghdr *build_channels_get(nl::Message &msg, std::uint16_t family, std::string_view dev);
nlmsghdr *build_channels_set(nl::Message &msg, std::uint16_t family, std::string_view dev,
                             const ChannelsRequest &req);
Status parse_channels(const nlmsghdr *nlh, Channels &out);

class Ethtool {
public:
    // Opens a generic netlink socket; throws std::system_error on failure.
    Ethtool();

    // Resolves (once) the "ethtool" family id.
    Status family(std::uint16_t &id);
    Status channels_get(std::string_view dev, Channels &out);
    Status channels_set(std::string_view dev, const ChannelsRequest &req);

private:
    nl::GenlFamily genl_;
};

} // namespace netutil::ethtool
