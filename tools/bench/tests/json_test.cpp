#include <cmath>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "json.hpp"

namespace {

using mqbench::json::Value;

TEST(Json, DumpCompact)
{
    Value v = Value::object();
    v.set("a", 1);
    v.set("b", -2);
    v.set("c", 2.5);
    v.set("d", "x");
    v.set("e", nullptr);
    v.set("f", true);
    v.set("g", Value::array());
    v.set("h", Value::object());
    v.set("i", std::optional<int>());
    v.set("j", std::optional<std::uint64_t>(7));
    EXPECT_EQ(v.dump(), R"({"a":1,"b":-2,"c":2.5,"d":"x","e":null,"f":true,"g":[],"h":{},)"
                        R"("i":null,"j":7})");
}

TEST(Json, DumpPretty)
{
    Value v = Value::object();
    v.set("k", Value::array());
    v.find("k");
    Value arr;
    arr.push(1);
    arr.push("two");
    v.set("k", arr);
    EXPECT_EQ(v.dump(2), "{\n  \"k\": [\n    1,\n    \"two\"\n  ]\n}");
}

TEST(Json, SetReplacesInOrder)
{
    Value v;
    v.set("x", 1);
    v.set("y", 2);
    v.set("x", 3);
    EXPECT_EQ(v.dump(), R"({"x":3,"y":2})");
}

TEST(Json, NonFiniteIsNull)
{
    Value v;
    v.push(std::numeric_limits<double>::infinity());
    v.push(std::nan(""));
    EXPECT_EQ(v.dump(), "[null,null]");
}

TEST(Json, EscapeRoundTrip)
{
    const std::string s = "quote\" backslash\\ nl\n tab\t ctl\x01 end";
    Value v;
    v.set(s, s);
    const std::string text = v.dump();
    EXPECT_NE(text.find("\\u0001"), std::string::npos);
    const auto back = Value::parse(text);
    ASSERT_TRUE(back);
    ASSERT_NE(back->find(s), nullptr);
    EXPECT_EQ(back->find(s)->as_string(), s);
}

TEST(Json, ParseNumbersAndUnicode)
{
    const auto v = Value::parse(R"( {"u": 18446744073709551615, "i": -5, "d": 1.5e3,
        "s": "\u00e9\ud83d\ude00", "a": [true, false, null]} )");
    ASSERT_TRUE(v);
    EXPECT_TRUE(v->find("u")->is_uint());
    EXPECT_EQ(v->find("u")->as_number(), 18446744073709551615.0);
    EXPECT_TRUE(v->find("i")->is_int());
    EXPECT_TRUE(v->find("d")->is_double());
    EXPECT_EQ(v->find("d")->as_number(), 1500.0);
    EXPECT_EQ(v->find("s")->as_string(), "\xc3\xa9\xf0\x9f\x98\x80");
    EXPECT_EQ(v->find("a")->as_array().size(), 3U);
}

TEST(Json, ParseRejects)
{
    for (const char *bad :
         {"", "{", "[1,]", R"({"a":1,})", "{'a':1}", "01", "1.", "-", "tru", R"("unterminated)",
          R"("bad \x escape")", "[1] 2", R"({"a" 1})", R"("\ud800")", "nul"})
        EXPECT_FALSE(Value::parse(bad)) << bad;
}

} // namespace
