//===- JsonTest.cpp - Tests of the strict JSON reader ---------------------===//

#include "Json.h"
#include "TestSupport.h"

#include <gtest/gtest.h>

namespace ggemm::runtime {
namespace {

using json::Value;

Value parseOk(const std::string &text) {
  Value value;
  std::string error;
  EXPECT_TRUE(json::parse(text, value, error)) << text << ": " << error;
  return value;
}

std::string parseError(const std::string &text) {
  Value value;
  std::string error;
  EXPECT_FALSE(json::parse(text, value, error)) << text;
  return error;
}

TEST(Json, Scalars) {
  EXPECT_TRUE(parseOk("null").isNull());
  EXPECT_TRUE(parseOk(" true ").getBool());
  EXPECT_FALSE(parseOk("false").getBool());
  EXPECT_EQ(parseOk("\"hi\"").getString(), "hi");
}

TEST(Json, Integers) {
  Value value = parseOk("132096");
  ASSERT_TRUE(value.isInteger());
  EXPECT_EQ(value.getInteger(), 132096);
  EXPECT_EQ(parseOk("-1").getInteger(), -1);
  EXPECT_EQ(parseOk("-0").getInteger(), 0);
  EXPECT_EQ(parseOk("9223372036854775807").getInteger(), INT64_MAX);
  EXPECT_EQ(parseOk("-9223372036854775808").getInteger(), INT64_MIN);
  // Too large for int64: still a number, not an integer.
  Value big = parseOk("9223372036854775808");
  EXPECT_TRUE(big.isNumber());
  EXPECT_FALSE(big.isInteger());
}

TEST(Json, NonIntegers) {
  Value value = parseOk("1.5");
  EXPECT_TRUE(value.isNumber());
  EXPECT_FALSE(value.isInteger());
  EXPECT_DOUBLE_EQ(value.getNumber(), 1.5);
  EXPECT_DOUBLE_EQ(parseOk("2e3").getNumber(), 2000);
  EXPECT_FALSE(parseOk("2e3").isInteger());
  EXPECT_DOUBLE_EQ(parseOk("-1.25E-2").getNumber(), -0.0125);
}

TEST(Json, StringEscapes) {
  EXPECT_EQ(parseOk(R"("a\"b\\c\/d\n\t")").getString(), "a\"b\\c/d\n\t");
  EXPECT_EQ(parseOk(R"("\u0041\u00e9")").getString(), "A\xC3\xA9");
  // A surrogate pair: U+1F600.
  EXPECT_EQ(parseOk(R"("\ud83d\ude00")").getString(), "\xF0\x9F\x98\x80");
}

TEST(Json, ObjectsAndArrays) {
  Value value = parseOk(R"({"a": [1, 2, {"b": null}], "c": {}})");
  ASSERT_TRUE(value.isObject());
  ASSERT_EQ(value.getObject().size(), 2u);
  const Value *a = value.find("a");
  ASSERT_TRUE(a && a->isArray());
  EXPECT_EQ(a->getArray().size(), 3u);
  EXPECT_TRUE(a->getArray()[2].find("b")->isNull());
  EXPECT_EQ(value.find("missing"), nullptr);
  EXPECT_TRUE(parseOk("[]").getArray().empty());
}

TEST(Json, Positions) {
  Value value = parseOk("{\n  \"a\":\n    [1,\n     true]}");
  const Value &element = value.find("a")->getArray()[1];
  EXPECT_EQ(element.getLine(), 4);
  EXPECT_EQ(element.getColumn(), 6);
}

TEST(Json, Errors) {
  EXPECT_CONTAINS(parseError(""), "1:1: expected a value, got end of input");
  EXPECT_CONTAINS(parseError("{\"a\": 1,}"), "1:9: trailing comma before '}'");
  EXPECT_CONTAINS(parseError("[1, 2,]"), "trailing comma before ']'");
  EXPECT_CONTAINS(parseError("{\"a\" 1}"), "expected ':' after key \"a\"");
  EXPECT_CONTAINS(parseError("{\"a\": 1 \"b\": 2}"),
                  "expected ',' or '}' after an object member, got '\"'");
  EXPECT_CONTAINS(parseError("{\"a\": 1, \"a\": 2}"),
                  "1:10: duplicate key \"a\"");
  EXPECT_CONTAINS(parseError("\"abc"), "unterminated string");
  EXPECT_CONTAINS(parseError("\"a\nb\""), "control character \\x0a");
  EXPECT_CONTAINS(parseError(R"("\x")"), "invalid escape '\\x'");
  EXPECT_CONTAINS(parseError(R"("\ud83d")"), "unpaired high surrogate");
  EXPECT_CONTAINS(parseError(R"("\ude00")"), "unpaired low surrogate");
  EXPECT_CONTAINS(parseError(R"("\u12")"), "expected 4 hexadecimal digits");
  EXPECT_CONTAINS(parseError("012"), "leading zeros");
  EXPECT_CONTAINS(parseError("1."), "expected a digit after '.'");
  EXPECT_CONTAINS(parseError("1e"), "expected a digit in the exponent");
  EXPECT_CONTAINS(parseError("-"), "expected a digit");
  EXPECT_CONTAINS(parseError("1e999"), "out of range");
  EXPECT_CONTAINS(parseError("tru"), "expected a value, got 't'");
  EXPECT_CONTAINS(parseError("nullx"), "expected a value");
  EXPECT_CONTAINS(parseError("{} {}"), "1:4: unexpected '{' after the JSON");
  EXPECT_CONTAINS(parseError("// comment\n{}"), "comments are not allowed");
  EXPECT_CONTAINS(parseError("[1\n,\n  x]"), "3:3: expected a value, got 'x'");
}

TEST(Json, DepthLimit) {
  std::string deep(100, '[');
  deep += std::string(100, ']');
  EXPECT_CONTAINS(parseError(deep), "nesting deeper than 64 levels");
  std::string fine(60, '[');
  fine += std::string(60, ']');
  parseOk(fine);
}

TEST(Json, ByteOrderMark) { EXPECT_TRUE(parseOk("\xEF\xBB\xBF{}").isObject()); }

} // namespace
} // namespace ggemm::runtime
