#include "json.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace mqbench::json {

double Value::as_number() const
{
    if (is_int())
        return static_cast<double>(std::get<std::int64_t>(v_));
    if (is_uint())
        return static_cast<double>(std::get<std::uint64_t>(v_));
    return std::get<double>(v_);
}

const Value *Value::find(std::string_view key) const
{
    if (!is_object())
        return nullptr;
    for (const auto &[k, v] : std::get<Object>(v_)) {
        if (k == key)
            return &v;
    }
    return nullptr;
}

Value &Value::set(std::string key, Value v)
{
    if (is_null())
        v_ = Object{};
    auto &obj = std::get<Object>(v_);
    for (auto &[k, old] : obj) {
        if (k == key) {
            old = std::move(v);
            return old;
        }
    }
    obj.emplace_back(std::move(key), std::move(v));
    return obj.back().second;
}

Value &Value::push(Value v)
{
    if (is_null())
        v_ = Array{};
    auto &arr = std::get<Array>(v_);
    arr.push_back(std::move(v));
    return arr.back();
}

void escape_string(std::string &out, std::string_view s)
{
    out += '"';
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

namespace {

void newline(std::string &out, int indent, int depth)
{
    if (indent < 0)
        return;
    out += '\n';
    out.append(static_cast<std::size_t>(indent) * static_cast<std::size_t>(depth), ' ');
}

template <typename T>
void append_number(std::string &out, T v)
{
    char buf[64];
    const auto res = std::to_chars(buf, buf + sizeof(buf), v);
    out.append(buf, res.ptr);
}

} // namespace

void Value::dump_to(std::string &out, int indent, int depth) const
{
    if (is_null()) {
        out += "null";
    } else if (is_bool()) {
        out += as_bool() ? "true" : "false";
    } else if (is_int()) {
        append_number(out, std::get<std::int64_t>(v_));
    } else if (is_uint()) {
        append_number(out, std::get<std::uint64_t>(v_));
    } else if (is_double()) {
        const double d = std::get<double>(v_);
        if (std::isfinite(d))
            append_number(out, d);
        else
            out += "null";
    } else if (is_string()) {
        escape_string(out, as_string());
    } else if (is_array()) {
        const Array &arr = as_array();
        out += '[';
        for (std::size_t i = 0; i < arr.size(); ++i) {
            if (i != 0)
                out += ',';
            newline(out, indent, depth + 1);
            arr[i].dump_to(out, indent, depth + 1);
        }
        if (!arr.empty())
            newline(out, indent, depth);
        out += ']';
    } else {
        const Object &obj = as_object();
        out += '{';
        for (std::size_t i = 0; i < obj.size(); ++i) {
            if (i != 0)
                out += ',';
            newline(out, indent, depth + 1);
            escape_string(out, obj[i].first);
            out += indent < 0 ? ":" : ": ";
            obj[i].second.dump_to(out, indent, depth + 1);
        }
        if (!obj.empty())
            newline(out, indent, depth);
        out += '}';
    }
}

std::string Value::dump(int indent) const
{
    std::string out;
    dump_to(out, indent, 0);
    return out;
}

namespace {

class Parser {
public:
    explicit Parser(std::string_view text) : s_(text) {}

    std::optional<Value> document()
    {
        auto v = value(0);
        skip_ws();
        if (!v || pos_ != s_.size())
            return std::nullopt;
        return v;
    }

private:
    static constexpr int kMaxDepth = 128;

    void skip_ws()
    {
        while (pos_ < s_.size() &&
               (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
            ++pos_;
    }

    bool consume(std::string_view word)
    {
        if (s_.substr(pos_, word.size()) != word)
            return false;
        pos_ += word.size();
        return true;
    }

    std::optional<Value> value(int depth)
    {
        if (depth > kMaxDepth)
            return std::nullopt;
        skip_ws();
        if (pos_ >= s_.size())
            return std::nullopt;
        const char c = s_[pos_];
        if (c == '{')
            return object(depth);
        if (c == '[')
            return array(depth);
        if (c == '"') {
            auto str = string();
            if (!str)
                return std::nullopt;
            return Value(std::move(*str));
        }
        if (consume("true"))
            return Value(true);
        if (consume("false"))
            return Value(false);
        if (consume("null"))
            return Value(nullptr);
        return number();
    }

    std::optional<Value> object(int depth)
    {
        ++pos_; // '{'
        Value obj = Value::object();
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == '}') {
            ++pos_;
            return obj;
        }
        while (true) {
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != '"')
                return std::nullopt;
            auto key = string();
            if (!key)
                return std::nullopt;
            skip_ws();
            if (pos_ >= s_.size() || s_[pos_] != ':')
                return std::nullopt;
            ++pos_;
            auto v = value(depth + 1);
            if (!v)
                return std::nullopt;
            obj.set(std::move(*key), std::move(*v));
            skip_ws();
            if (pos_ >= s_.size())
                return std::nullopt;
            if (s_[pos_] == '}') {
                ++pos_;
                return obj;
            }
            if (s_[pos_] != ',')
                return std::nullopt;
            ++pos_;
        }
    }

    std::optional<Value> array(int depth)
    {
        ++pos_; // '['
        Value arr = Value::array();
        skip_ws();
        if (pos_ < s_.size() && s_[pos_] == ']') {
            ++pos_;
            return arr;
        }
        while (true) {
            auto v = value(depth + 1);
            if (!v)
                return std::nullopt;
            arr.push(std::move(*v));
            skip_ws();
            if (pos_ >= s_.size())
                return std::nullopt;
            if (s_[pos_] == ']') {
                ++pos_;
                return arr;
            }
            if (s_[pos_] != ',')
                return std::nullopt;
            ++pos_;
        }
    }

    static void put_utf8(std::string &out, std::uint32_t cp)
    {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xc0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xe0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        } else {
            out += static_cast<char>(0xf0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
            out += static_cast<char>(0x80 | (cp & 0x3f));
        }
    }

    std::optional<std::uint32_t> hex4()
    {
        if (pos_ + 4 > s_.size())
            return std::nullopt;
        std::uint32_t v = 0;
        const auto [ptr, ec] = std::from_chars(s_.data() + pos_, s_.data() + pos_ + 4, v, 16);
        if (ec != std::errc() || ptr != s_.data() + pos_ + 4)
            return std::nullopt;
        pos_ += 4;
        return v;
    }

    std::optional<std::string> string()
    {
        ++pos_; // opening quote
        std::string out;
        while (pos_ < s_.size()) {
            const char c = s_[pos_++];
            if (c == '"')
                return out;
            if (static_cast<unsigned char>(c) < 0x20)
                return std::nullopt;
            if (c != '\\') {
                out += c;
                continue;
            }
            if (pos_ >= s_.size())
                return std::nullopt;
            const char e = s_[pos_++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                out += e;
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                auto cp = hex4();
                if (!cp)
                    return std::nullopt;
                if (*cp >= 0xd800 && *cp < 0xdc00) {
                    if (!consume("\\u"))
                        return std::nullopt;
                    auto lo = hex4();
                    if (!lo || *lo < 0xdc00 || *lo >= 0xe000)
                        return std::nullopt;
                    *cp = 0x10000 + ((*cp - 0xd800) << 10) + (*lo - 0xdc00);
                } else if (*cp >= 0xdc00 && *cp < 0xe000) {
                    return std::nullopt;
                }
                put_utf8(out, *cp);
                break;
            }
            default:
                return std::nullopt;
            }
        }
        return std::nullopt;
    }

    std::optional<Value> number()
    {
        const std::size_t start = pos_;
        auto digits = [&] {
            const std::size_t from = pos_;
            while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9')
                ++pos_;
            return pos_ - from;
        };
        const bool negative = consume("-");
        const std::size_t int_start = pos_;
        const std::size_t int_digits = digits();
        if (int_digits == 0 || (int_digits > 1 && s_[int_start] == '0'))
            return std::nullopt;
        bool is_float = false;
        if (consume(".")) {
            is_float = true;
            if (digits() == 0)
                return std::nullopt;
        }
        if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
            is_float = true;
            ++pos_;
            if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-'))
                ++pos_;
            if (digits() == 0)
                return std::nullopt;
        }
        const char *first = s_.data() + start;
        const char *last = s_.data() + pos_;
        if (!is_float) {
            if (negative) {
                std::int64_t i = 0;
                if (std::from_chars(first, last, i).ec == std::errc())
                    return Value(i);
            } else {
                std::uint64_t u = 0;
                if (std::from_chars(first, last, u).ec == std::errc())
                    return Value(u);
            }
        }
        double d = 0;
        if (std::from_chars(first, last, d).ec != std::errc())
            return std::nullopt;
        return Value(d);
    }

    std::string_view s_;
    std::size_t pos_ = 0;
};

} // namespace

std::optional<Value> Value::parse(std::string_view text)
{
    return Parser(text).document();
}

} // namespace mqbench::json
