// Minimal JSON value with an ordered object type, a serializer and a strict parser.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace mqbench::json {

class Value {
public:
    using Array = std::vector<Value>;
    // Keys keep their insertion order (reports read better that way).
    using Object = std::vector<std::pair<std::string, Value>>;

    Value() = default;
    Value(std::nullptr_t) {}
    Value(bool b) : v_(b) {}
    template <std::signed_integral T>
    Value(T i) : v_(static_cast<std::int64_t>(i))
    {
    }
    template <std::unsigned_integral T> // bool takes the non-template constructor
    Value(T u) : v_(static_cast<std::uint64_t>(u))
    {
    }
    template <std::floating_point T>
    Value(T d) : v_(static_cast<double>(d))
    {
    }
    Value(const char *s) : v_(std::string(s)) {}
    Value(std::string s) : v_(std::move(s)) {}
    Value(std::string_view s) : v_(std::string(s)) {}
    Value(Array a) : v_(std::move(a)) {}
    Value(Object o) : v_(std::move(o)) {}
    template <typename T>
    Value(const std::optional<T> &o)
    {
        if (o)
            *this = Value(*o);
    }

    static Value array() { return {Array{}}; }
    static Value object() { return {Object{}}; }

    bool is_null() const { return std::holds_alternative<std::nullptr_t>(v_); }
    bool is_bool() const { return std::holds_alternative<bool>(v_); }
    bool is_int() const { return std::holds_alternative<std::int64_t>(v_); }
    bool is_uint() const { return std::holds_alternative<std::uint64_t>(v_); }
    bool is_double() const { return std::holds_alternative<double>(v_); }
    bool is_number() const { return is_int() || is_uint() || is_double(); }
    bool is_string() const { return std::holds_alternative<std::string>(v_); }
    bool is_array() const { return std::holds_alternative<Array>(v_); }
    bool is_object() const { return std::holds_alternative<Object>(v_); }

    // Accessors; std::bad_variant_access on a type mismatch.
    bool as_bool() const { return std::get<bool>(v_); }
    const std::string &as_string() const { return std::get<std::string>(v_); }
    const Array &as_array() const { return std::get<Array>(v_); }
    const Object &as_object() const { return std::get<Object>(v_); }
    // Any number as double.
    double as_number() const;

    // Object: member lookup (nullptr when absent or not an object).
    const Value *find(std::string_view key) const;
    // Object: replaces an existing member or appends a new one. Converts null to an object.
    Value &set(std::string key, Value v);
    // Array: appends. Converts null to an array.
    Value &push(Value v);

    // Compact output when indent < 0, else pretty-printed with that many spaces per level.
    // Non-finite doubles are written as null.
    std::string dump(int indent = -1) const;

    // Parses one JSON text (RFC 8259); nullopt on any syntax error or trailing garbage.
    static std::optional<Value> parse(std::string_view text);

private:
    void dump_to(std::string &out, int indent, int depth) const;

    std::variant<std::nullptr_t, bool, std::int64_t, std::uint64_t, double, std::string, Array,
                 Object>
            v_ = nullptr;
};

// Writes s as a JSON string literal, with quotes.
void escape_string(std::string &out, std::string_view s);

} // namespace mqbench::json
