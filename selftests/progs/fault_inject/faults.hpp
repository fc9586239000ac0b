// fault_inject: the fault injection itself: kernel symbols for the stack filters, the
// failslab and fail_page_alloc knobs, fail-nth, kmemleak.
#pragma once

#include "common.hpp"

namespace fault_inject {

// -- kernel symbols ------------------------------------------------------------------

struct Range {
    unsigned long start = 0;
    unsigned long end = 0;
    std::string what;
    bool valid() const { return start != 0 && end > start; }
};

class Symbols {
public:
    bool load()
    {
        std::ifstream in("/proc/kallsyms");
        std::string line;
        while (std::getline(in, line)) {
            std::istringstream ls(line);
            std::string addr, type, name, mod;
            ls >> addr >> type >> name >> mod;
            if (type.empty() || (type[0] != 't' && type[0] != 'T'))
                continue;
            const unsigned long a = std::stoul(addr, nullptr, 16);
            if (a == 0)
                continue;
            text_.push_back(a);
            if (mod.size() > 2 && mod.front() == '[')
                mod = mod.substr(1, mod.size() - 2);
            syms_.emplace(name, Sym{a, mod});
        }
        std::sort(text_.begin(), text_.end());
        text_.erase(std::unique(text_.begin(), text_.end()), text_.end());
        return !text_.empty();
    }

    // [name, next text symbol).
    Range function(const std::string &name) const
    {
        auto it = syms_.find(name);
        if (it == syms_.end())
            return {};
        return {it->second.addr, next_after(it->second.addr), name};
    }

    // From the lowest to past the highest text symbol of a module.
    Range module(const std::string &mod) const
    {
        unsigned long lo = 0, hi = 0;
        for (const auto &[name, s] : syms_) {
            if (s.mod != mod)
                continue;
            lo = lo == 0 ? s.addr : std::min(lo, s.addr);
            hi = std::max(hi, s.addr);
        }
        if (lo == 0)
            return {};
        return {lo, next_after(hi), concat("module ", mod)};
    }

    // From the lower to past the higher of two functions (the code between included).
    Range span(const std::string &a, const std::string &b) const
    {
        const Range ra = function(a), rb = function(b);
        if (!ra.valid() || !rb.valid())
            return {};
        return {std::min(ra.start, rb.start), std::max(ra.end, rb.end), concat(a, "..", b)};
    }

private:
    struct Sym {
        unsigned long addr;
        std::string mod;
    };

    unsigned long next_after(unsigned long a) const
    {
        auto it = std::upper_bound(text_.begin(), text_.end(), a);
        return it == text_.end() ? a + 4096 : *it;
    }

    std::vector<unsigned long> text_;
    std::multimap<std::string, Sym> syms_;
};

// -- fault injection -----------------------------------------------------------------

std::string fault_dir(std::string_view attr);

std::string write_knob(std::string_view attr, std::string_view knob, std::string_view value);

std::string hex(unsigned long v);

constexpr std::string_view kAttrs[] = {"failslab", "fail_page_alloc"};

// failslab and fail_page_alloc: nothing fails but the n-th site of fail-nth (probability
// 100 for tasks with make-it-fail only, which none has), GFP_KERNEL and order 0 included,
// silent (a stack dump would read as a kernel splat), the deepest stack trace.
std::string configure_faults();

std::string set_filter(const Range &require, const Range &reject);

// /proc/thread-self/fail-nth, kept open: reading and writing it allocates nothing.
class FailNth {
public:
    FailNth() : fd_(::open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC)) {}
    ~FailNth()
    {
        if (fd_ >= 0)
            ::close(fd_);
    }
    FailNth(const FailNth &) = delete;
    FailNth &operator=(const FailNth &) = delete;

    bool available() const { return fd_ >= 0; }
    bool arm(unsigned n) const
    {
        const std::string s = std::to_string(n);
        return ::pwrite(fd_, s.data(), s.size(), 0) == static_cast<ssize_t>(s.size());
    }
    // What is left of n: 0 once the fault was injected.
    unsigned left() const
    {
        char buf[32] = {};
        const ssize_t r = ::pread(fd_, buf, sizeof(buf) - 1, 0);
        return r > 0 ? static_cast<unsigned>(std::strtoul(buf, nullptr, 10)) : 0;
    }
    void disarm() const { arm(0); }

private:
    int fd_;
};

// -- kmemleak ------------------------------------------------------------------------

class Kmemleak {
public:
    bool available() const { return ::access(path().c_str(), W_OK) == 0; }

    // Objects reported now that were not before (scan twice: objects younger than 5 s
    // are not reported). nullopt without kmemleak.
    std::optional<std::vector<std::string>> new_leaks()
    {
        if (!available())
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::seconds(6));
        std::vector<std::string> fresh;
        for (int i = 0; i < 2; i++) {
            if (!sysfs::write_file(path(), "scan").empty())
                return std::nullopt;
        }
        const auto text = sysfs::read_file(path());
        if (!text)
            return std::nullopt;
        std::istringstream in(*text);
        std::string line, current;
        std::vector<std::string> reports;
        while (std::getline(in, line)) {
            if (line.rfind("unreferenced object", 0) == 0) {
                reports.push_back(line);
            } else if (!reports.empty() && reports.back().size() < 4000) {
                reports.back() += "\n" + line;
            }
        }
        for (const std::string &r : reports) {
            const std::string head = r.substr(0, r.find('\n'));
            if (seen_.insert(head).second)
                fresh.push_back(r);
        }
        return fresh;
    }

private:
    static std::string path() { return concat(kDebugfs, "/kmemleak"); }
    std::set<std::string> seen_;
};

} // namespace fault_inject
