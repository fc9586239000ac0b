// Rows: qdiscs (zero limits tc does not send) and filters.
#include "bad_input.hpp"

namespace bad_input {

const std::vector<Row> kTcRows = {
        // Qdiscs: zero limits that tc does not send.
        {"qdisc.codel_limit_zero", "`tc qdisc replace dev DEV root handle 1: codel limit 0`",
         kHowQdisc,
         accepted("valid configuration: every packet is dropped; the patched codel also "
                  "stops bypassing it (TCQ_F_CAN_BYPASS cleared)"),
         accepted("valid configuration: every packet should be dropped, but an idle codel "
                  "is still bypassed (the bug the series fixes)"),
         "root is codel 1: with TCA_CODEL_LIMIT 0; links, queues, filters unchanged", Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "codel", {u32_bytes(TCA_CODEL_LIMIT, 0)});
         },
         nullptr,
         [](Env &, const Fix &, const Request &, const Snapshot &b, const Snapshot &a) {
             return root_qdisc_is(b, a, "codel", TCA_CODEL_LIMIT, 0);
         }},
        {"qdisc.fq_codel_limit_zero", "`tc qdisc replace dev DEV root handle 1: fq_codel limit 0`",
         kHowQdisc,
         accepted("valid configuration: every packet is dropped; the patched fq_codel also "
                  "stops bypassing it"),
         accepted("valid configuration, but an idle fq_codel is still bypassed (the bug the "
                  "series fixes)"),
         "root is fq_codel 1: with TCA_FQ_CODEL_LIMIT 0; links, queues, filters unchanged",
         Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "fq_codel", {u32_bytes(TCA_FQ_CODEL_LIMIT, 0)});
         },
         nullptr,
         [](Env &, const Fix &, const Request &, const Snapshot &b, const Snapshot &a) {
             return root_qdisc_is(b, a, "fq_codel", TCA_FQ_CODEL_LIMIT, 0);
         }},
        {"qdisc.fq_codel_memory_limit_zero",
         "`tc qdisc replace dev DEV root handle 1: fq_codel memory_limit 0`", kHowQdisc,
         accepted("valid configuration: non-socket packets are dropped; the bypass stays "
                  "(memory_limit is not part of it, Documentation/design.md #7)"),
         accepted("as on the patched kernel"),
         "root is fq_codel 1: with TCA_FQ_CODEL_MEMORY_LIMIT 0; links, queues, filters "
         "unchanged",
         Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "fq_codel",
                              {u32_bytes(TCA_FQ_CODEL_MEMORY_LIMIT, 0)});
         },
         nullptr,
         [](Env &, const Fix &, const Request &, const Snapshot &b, const Snapshot &a) {
             return root_qdisc_is(b, a, "fq_codel", TCA_FQ_CODEL_MEMORY_LIMIT, 0);
         }},
        {"qdisc.fq_codel_flows_zero", "`tc qdisc replace dev DEV root fq_codel flows 0`", kHowQdisc,
         error(EINVAL), error(EINVAL), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "fq_codel", {u32_bytes(TCA_FQ_CODEL_FLOWS, 0)});
         }},
        {"qdisc.fq_codel_flows_change",
         "`tc qdisc change dev DEV root handle 1: fq_codel flows 1024` on an fq_codel", kHowQdisc,
         error(EINVAL), error(EINVAL), "as before: root fq_codel 1: keeps its options", Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, 0, "fq_codel", {u32_bytes(TCA_FQ_CODEL_FLOWS, 1024)});
         },
         [](Env &e, const Fix &f) {
             return set_root(e, f, "fq_codel");
         }},
        {"qdisc.fq_codel_quantum_too_big",
         "`tc qdisc replace dev DEV root fq_codel quantum 1048577`", kHowQdisc,
         error(EINVAL, "Invalid quantum"), error(EINVAL, "Invalid quantum"), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "fq_codel",
                              {u32_bytes(TCA_FQ_CODEL_QUANTUM, (1U << 20) + 1)});
         }},
        {"qdisc.codel_limit_short", "codel with a 2-byte TCA_CODEL_LIMIT (wrong length)", kHowQdisc,
         error(ERANGE), error(ERANGE), kAllState, Where::init,
         [](Env &, const Fix &f) {
             const std::uint16_t zero = 0;
             return qdisc_msg(f, kCreateReplace, "codel",
                              {attr_bytes(TCA_CODEL_LIMIT, &zero, sizeof(zero))});
         }},
        {"qdisc.unknown_kind", "`tc qdisc replace dev DEV root nosuchqdisc`", kHowQdisc,
         error(ENOENT, "Specified qdisc kind is unknown"),
         error(ENOENT, "Specified qdisc kind is unknown"), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "nosuchqdisc", {});
         }},
        {"qdisc.missing_kind", "RTM_NEWQDISC create at the root without TCA_KIND", kHowQdisc,
         error(ENOENT, "Specified qdisc kind is unknown"),
         error(ENOENT, "Specified qdisc kind is unknown"), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, kCreateReplace, "", {}, false);
         }},
        {"qdisc.change_other_kind",
         "`tc qdisc change dev DEV root handle 1: codel limit 0` on an fq_codel", kHowQdisc,
         error(EINVAL, "Invalid qdisc name: must match existing qdisc"),
         error(EINVAL, "Invalid qdisc name: must match existing qdisc"),
         "as before: root fq_codel 1: keeps its options", Where::init,
         [](Env &, const Fix &f) {
             return qdisc_msg(f, 0, "codel", {u32_bytes(TCA_CODEL_LIMIT, 0)});
         },
         [](Env &e, const Fix &f) {
             return set_root(e, f, "fq_codel");
         }},
        {"qdisc.no_device", "RTM_NEWQDISC codel on an ifindex no device has", kHowQdisc,
         error(ENODEV), error(ENODEV), kAllState, Where::init,
         [](Env &, const Fix &) {
             Request r = qdisc_msg(Fix{"", 0x7ffffff0}, kCreateReplace, "codel",
                                   {u32_bytes(TCA_CODEL_LIMIT, 0)});
             return r;
         }},

        // Filters.
        {"filter.classless_parent", "`tc filter add dev DEV parent 1: matchall` on a codel",
         kHowFilter, error(EINVAL, "Qdisc not classful"), error(EINVAL, "Qdisc not classful"),
         "as before: root codel 1:, ingress filter kept", Where::init,
         [](Env &, const Fix &f) {
             return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, kRootHandle, 1, 1, "matchall");
         },
         [](Env &e, const Fix &f) {
             return set_root(e, f, "codel");
         }},
        {"filter.unknown_kind", "`tc filter add dev DEV ingress prio 2 nosuchcls`", kHowFilter,
         error(ENOENT, "TC classifier not found"), error(ENOENT, "TC classifier not found"),
         kAllState, Where::init,
         [](Env &, const Fix &f) {
             return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 2, 1,
                               "nosuchcls");
         }},
        {"filter.matchall_second_handle",
         "matchall at ingress prio 1 with handle 2 (the prio 1 matchall has handle 1)", kHowFilter,
         error(EEXIST), error(EEXIST), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 1, 2,
                               "matchall");
         }},
        {"filter.fq_codel_flags_invalid",
         "`tc filter add dev DEV parent 1: prio 1 matchall skip_hw skip_sw` on an fq_codel",
         kHowFilter, error(EINVAL), error(EINVAL),
         "as before: root fq_codel 1: without filters, ingress filter kept", Where::init,
         [](Env &, const Fix &f) {
             // cls_api links the new classifier into chain 0 (fq_codel's chain head
             // callback runs) before matchall refuses the flags and it is unlinked.
             return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, kRootHandle, 1, 1, "matchall",
                               TCA_CLS_FLAGS_SKIP_HW | TCA_CLS_FLAGS_SKIP_SW);
         },
         [](Env &e, const Fix &f) {
             return set_root(e, f, "fq_codel");
         }},
        {"filter.duplicate", "the ingress matchall again (prio 1 handle 1, NLM_F_EXCL)", kHowFilter,
         error(EEXIST, "Filter already exists"), error(EEXIST, "Filter already exists"), kAllState,
         Where::init,
         [](Env &, const Fix &f) {
             return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 1, 1,
                               "matchall");
         }},
        {"filter.missing_kind", "RTM_NEWTFILTER create at ingress prio 2 without TCA_KIND",
         kHowFilter, error(EINVAL, "Filter kind and protocol must be specified"),
         error(EINVAL, "Filter kind and protocol must be specified"), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return filter_msg(f, NLM_F_CREATE | NLM_F_EXCL, rtnl::kIngressParent, 2, 1,
                               std::nullopt);
         }},
        {"filter.prio_zero_change", "RTM_NEWTFILTER without NLM_F_CREATE and with prio 0",
         kHowFilter, error(ENOENT, "Invalid filter command with priority of zero"),
         error(ENOENT, "Invalid filter command with priority of zero"), kAllState, Where::init,
         [](Env &, const Fix &f) {
             return filter_msg(f, 0, rtnl::kIngressParent, 0, 1, "matchall");
         }},

};

} // namespace bad_input
