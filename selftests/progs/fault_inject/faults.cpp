#include "faults.hpp"

namespace fault_inject {

Options g_opts;

// -- kernel symbols ------------------------------------------------------------------

// -- fault injection -----------------------------------------------------------------

std::string fault_dir(std::string_view attr)
{
    return concat(kDebugfs, "/", attr);
}

std::string write_knob(std::string_view attr, std::string_view knob, std::string_view value)
{
    return sysfs::write_file(concat(fault_dir(attr), "/", knob), value);
}

std::string hex(unsigned long v)
{
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%lx", v);
    return buf;
}

// failslab and fail_page_alloc: nothing fails but the n-th site of fail-nth (probability
// 100 for tasks with make-it-fail only, which none has), GFP_KERNEL and order 0 included,
// silent (a stack dump would read as a kernel splat), the deepest stack trace.
std::string configure_faults()
{
    for (std::string_view attr : kAttrs) {
        for (auto [knob, value] :
             {std::pair<std::string_view, std::string_view>{"task-filter", "Y"},
              {"probability", "100"},
              {"times", "-1"},
              {"ignore-gfp-wait", "N"},
              {"verbose", "0"},
              {"stacktrace-depth", "32"}}) {
            if (std::string err = write_knob(attr, knob, value); !err.empty())
                return err;
        }
    }
    if (std::string err = write_knob("fail_page_alloc", "min-order", "0"); !err.empty())
        return err;
    return {};
}

std::string set_filter(const Range &require, const Range &reject)
{
    for (std::string_view attr : kAttrs) {
        for (auto [knob, value] :
             {std::pair<std::string, std::string>{"require-start", hex(require.start)},
              {"require-end", hex(require.end)},
              {"reject-start", hex(reject.start)},
              {"reject-end", hex(reject.end)}}) {
            if (std::string err = write_knob(attr, knob, value); !err.empty())
                return err;
        }
    }
    return {};
}

// -- namespaces ----------------------------------------------------------------------

// -- kmemleak ------------------------------------------------------------------------

} // namespace fault_inject
