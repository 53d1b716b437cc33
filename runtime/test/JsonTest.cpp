//===- JsonTest.cpp - Tests of the manifest's JSON layer ------------------===//
//
// The manifest reader parses with nlohmann/json and adds what a manifest
// needs on top: duplicate keys and deep nesting rejected, every nlohmann
// error turned into a Status that names the file and where the text is
// wrong. These tests feed it hostile documents through parseManifest.
//
//===----------------------------------------------------------------------===//

#include "Manifest.h"
#include "TestSupport.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <initializer_list>
#include <string>

namespace ggemm::runtime {
namespace {

using test::withManifest;

/// The status of parsing `text` as "k.json"; never throws.
Status parse(const std::string &text) {
  Manifest manifest;
  Status status = Status::success();
  EXPECT_NO_THROW(status = parseManifest(text, "k.json", "/b", manifest));
  return status;
}

/// The message of a document that must be rejected as a bad manifest.
std::string parseError(const std::string &text) {
  Status status = parse(text);
  EXPECT_EQ(status.getCode(), GGEMM_ERROR_BAD_MANIFEST) << status.getMessage();
  return status.getMessage();
}

void parseOk(const std::string &text) {
  Status status = parse(text);
  EXPECT_TRUE(status.ok()) << status.getMessage();
}

/// kSegmentManifest with `member` added at the top level, where unknown keys
/// are metadata: only the JSON layer can reject it.
std::string withMetadata(const std::string &member) {
  return withManifest("\"format\": \"ggemm-bundle\",",
                      member + ", \"format\": \"ggemm-bundle\",");
}

TEST(Json, MalformedDocumentsNameLineColumnAndByte) {
  EXPECT_EQ(parseError(""),
            "k.json:1:1: invalid JSON at byte 1: syntax error while parsing "
            "value - unexpected end of input; expected '[', '{', or a "
            "literal");
  EXPECT_EQ(parseError("{\"a\": 1,}"),
            "k.json:1:9: invalid JSON at byte 9: syntax error while parsing "
            "object key - unexpected '}'; expected string literal");
  EXPECT_CONTAINS(parseError("{\"a\": [1, 2,]}"),
                  "k.json:1:13: invalid JSON at byte 13: syntax error while "
                  "parsing value - unexpected ']'");
  EXPECT_CONTAINS(parseError("{\n  \"a\":\n    x}"),
                  "k.json:3:5: invalid JSON at byte 14: syntax error while "
                  "parsing value - invalid literal; last read: '\"a\":<U+000A>"
                  "    x'");
  EXPECT_CONTAINS(parseError("{} {}"),
                  "k.json:1:4: invalid JSON at byte 4: syntax error while "
                  "parsing value - unexpected '{'; expected end of input");
  // nlohmann/json would stop at a NUL byte and accept "{}".
  EXPECT_EQ(parseError(std::string("{}\0{", 4)),
            "k.json:1:3: invalid JSON at byte 3: NUL byte (JSON text cannot "
            "contain one)");
  // Extensions some writers produce: comments, single quotes, NaN, leading
  // zeros, unescaped control characters.
  for (const char *text :
       {"// comment\n{}", "{\"a\": 1 /* comment */}", "{'a': 1}",
        "{\"a\": NaN}", "{\"a\": Infinity}", "{\"a\": 012}", "{\"a\": +1}",
        "{\"a\": \"line\nbreak\"}", "{\"a\": 1", "{\"a\" 1}", "{\"a\": tru}"})
    EXPECT_CONTAINS(parseError(text), "invalid JSON at byte") << text;
}

/// kSegmentManifest with `from` replaced by `to`, and the error it gives.
struct Edit {
  const char *from;
  const char *to;
  const char *error;
};

void expectErrors(std::initializer_list<Edit> edits) {
  for (const Edit &edit : edits)
    EXPECT_EQ(parseError(withManifest(edit.from, edit.to)), edit.error)
        << edit.to;
}

const char *const kEntry = "\"entry\": \"ggemm_segment_matmul_kernel\"";

TEST(Json, WrongTypesNameTheField) {
  EXPECT_EQ(parseError("[]"), "k.json: expected an object, got array");
  EXPECT_EQ(parseError("null"), "k.json: expected an object, got null");
  EXPECT_EQ(parseError("\"ggemm\""),
            "k.json: expected an object, got string \"ggemm\"");
  EXPECT_EQ(parseError("42"), "k.json: expected an object, got 42");
  expectErrors({
      {"\"version\": 1", "\"version\": 1.0",
       "k.json: /version: expected an integer, got 1.0"},
      {kEntry, "\"entry\": null",
       "k.json: /entry: expected a string, got null"},
      {kEntry, "\"entry\": \"\"",
       "k.json: /entry: expected a non-empty string"},
      {"[384, 1, 1]", "\"384\"",
       "k.json: /block: expected an array of 3 integers, got string \"384\""},
      {"\"has_bias\": false", "\"has_bias\": 0",
       "k.json: /problem/has_bias: expected true or false, got 0"},
      {"\"a_dtype\": \"bf16\"", "\"a_dtype\": 16",
       "k.json: /problem/a_dtype: expected one of bf16, f16, f32, f8e4m3, "
       "f8e5m2 or s8, got 16"},
      {"\"name\": \"a_desc\"", "\"name\": 7",
       "k.json: /params/0/name: expected a string, got 7"},
      {"\"tile\": {", "\"tile\": [], \"unused\": {",
       "k.json: /tile: expected an object, got array"},
      {"\"params\": [", "\"params\": {}, \"unused\": [",
       "k.json: /params: expected an array, got object"},
      {"{\"name\": \"y\", \"kind\": \"pointer\", \"tensor\": \"y\"}", "[\"y\"]",
       "k.json: /params/2: expected an object, got array"},
  });
}

TEST(Json, PointersEscapeKeys) {
  // RFC 6901: "~" is written "~0" and "/" is written "~1".
  EXPECT_CONTAINS(
      parseError(withManifest("\"stages\": 4", "\"stages\": 4, \"a/b~c\": 1")),
      "k.json: /tile/a~1b~0c: unknown key");
}

TEST(Json, DeepNesting) {
  // The manifest object is level 0, so "generator" may hold 64 nested
  // arrays; a 65th is rejected wherever it is.
  auto nested = [](int depth) {
    return "\"generator\": " + std::string(depth, '[') +
           std::string(depth, ']');
  };
  parseOk(withMetadata(nested(64)));
  EXPECT_EQ(parseError(withMetadata(nested(65))),
            "k.json: invalid JSON: nesting deeper than 64 levels");
  // Deep enough to overflow the stack of a recursive parser or destructor.
  EXPECT_EQ(parseError(std::string(1000000, '[')),
            "k.json: invalid JSON: nesting deeper than 64 levels");
  std::string objects;
  for (int i = 0; i < 100000; ++i)
    objects += "{\"a\": ";
  EXPECT_EQ(parseError(objects),
            "k.json: invalid JSON: nesting deeper than 64 levels");
}

TEST(Json, HugeNumbers) {
  const char *const ldy = "\"dtype\": \"i64\", \"value\": \"ldy\"";
  expectErrors({
      {"\"k\": 7168", "\"k\": 1e999",
       "k.json: /problem/k: invalid JSON: number overflow parsing '1e999'"},
      {"[384, 1, 1]", "[384, -1e999, 1]",
       "k.json: /block/1: invalid JSON: number overflow parsing '-1e999'"},
      // Integers beyond 64 bits become floating point, never wrap around.
      {"\"k\": 7168", "\"k\": 18446744073709551623",
       "k.json: /problem/k: expected a positive integer or -1 (dynamic), got "
       "1.8446744073709552e+19"},
      {"\"version\": 1", "\"version\": 18446744073709551617",
       "k.json: /version: expected an integer, got 1.8446744073709552e+19"},
      // Beyond int64 (nlohmann/json reads them as unsigned): not integers to
      // the manifest.
      {"\"dynamic_smem\": 132096", "\"dynamic_smem\": 9223372036854775808",
       "k.json: /dynamic_smem: expected an integer, got "
       "9223372036854775808"},
      {ldy, "\"dtype\": \"i64\", \"value\": 9223372036854775808",
       "k.json: /params/12/value: expected one of num_rows, rows_per_group, "
       "num_groups, num_weights, m, n, k, lda, ldy, num_tiles, y_rows, "
       "x_rows, num_pairs, scale_stride_group, scale_stride_row, "
       "scale_stride_col, y_scale_stride_row or y_scale_stride_col, "
       "got 9223372036854775808"},
      // A fraction or an exponent makes a number no integer.
      {"\"n\": 4096", "\"n\": 4096.0",
       "k.json: /problem/n: expected a positive integer or -1 (dynamic), got "
       "4096.0"},
      {"\"n\": 4096", "\"n\": 4096e0",
       "k.json: /problem/n: expected a positive integer or -1 (dynamic), got "
       "4096.0"},
  });
  // The int64 extremes are fine as i64 scalar literals.
  Manifest manifest;
  for (const char *literal : {"9223372036854775807", "-9223372036854775808"}) {
    Status status =
        parseManifest(withManifest(ldy, "\"dtype\": \"i64\", \"value\": " +
                                            std::string(literal)),
                      "k.json", "", manifest);
    ASSERT_TRUE(status.ok()) << status.getMessage();
    EXPECT_EQ(std::to_string(manifest.params[12].literal), literal);
  }
}

TEST(Json, DuplicateKeys) {
  // nlohmann/json would keep the last value; RFC 8259 leaves the meaning
  // undefined, so a manifest must not have them anywhere.
  expectErrors({
      {"\"version\": 1", "\"version\": 1, \"version\": 2",
       "k.json: /version: invalid JSON: duplicate key \"version\""},
      {"\"optional\": false", "\"optional\": false, \"optional\": true",
       "k.json: /params/3/optional: invalid JSON: duplicate key "
       "\"optional\""},
  });
  EXPECT_EQ(parseError(withMetadata("\"generator\": [{}, {\"a\": 1, "
                                    "\"b\": [], \"a\": 2}]")),
            "k.json: /generator/1/a: invalid JSON: duplicate key \"a\"");
  // Escapes are decoded before keys are compared.
  EXPECT_EQ(parseError("{\"a\": 1, \"\\u0061\": 2}"),
            "k.json: /a: invalid JSON: duplicate key \"a\"");
  // The same key in different objects is fine.
  parseOk(withMetadata("\"generator\": [{\"a\": 1}, {\"a\": 2}]"));
}

TEST(Json, NonUtf8) {
  auto expectAscii = [](const std::string &message) {
    EXPECT_TRUE(std::all_of(message.begin(), message.end(),
                            [](unsigned char c) { return c < 0x80; }))
        << message;
  };
  // A stray byte, an overlong '/', a truncated sequence, an encoded
  // surrogate.
  for (const char *bad : {"\xff", "\xc0\xaf", "\xe2\x82", "\xed\xa0\x80"}) {
    std::string message = parseError(
        withManifest(kEntry, "\"entry\": \"kernel" + std::string(bad) + "\""));
    EXPECT_CONTAINS(message, "invalid JSON at byte");
    EXPECT_CONTAINS(message, "ill-formed UTF-8 byte");
    expectAscii(message);
  }
  std::string message = parseError("{\"\xff\": 1}");
  EXPECT_EQ(message, "k.json:1:3: invalid JSON at byte 3: syntax error while "
                     "parsing object key - invalid string: ill-formed UTF-8 "
                     "byte; last read: '\"\\xff'; expected string literal");
  // Escapes must encode whole characters.
  EXPECT_CONTAINS(
      parseError("{\"a\": \"\\ud83d\"}"),
      "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF");
  EXPECT_CONTAINS(parseError("{\"a\": \"\\ude00\"}"),
                  "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF");
  // Valid UTF-8, escaped or not, and a byte order mark are accepted.
  parseOk(withMetadata("\"note\": \"k\xc3\xa9rnel \\u00e9 \\ud83d\\ude00\""));
  parseOk("\xEF\xBB\xBF" + std::string(test::kSegmentManifest));
  // An unknown key is quoted back as written.
  EXPECT_CONTAINS(parseError(withManifest("\"stages\": 4",
                                          "\"stages\": 4, \"\xc3\xa9\": 1")),
                  "k.json: /tile/\xc3\xa9: unknown key");
}

TEST(Json, AcceptsManifestsAsTheCompilerWritesThem) {
  // ggemm-export-bundle writes keys sorted and indented by 2 (llvm::json),
  // and keys the runtime does not read.
  nlohmann::json manifest = nlohmann::json::parse(test::kSegmentManifest);
  manifest["problem"]["activation"] = "none";
  manifest["tile"]["consumer_warpgroups"] = 2;
  manifest["generator"] = {{"name", "gemm-opt"}, {"version", "0.1"}};
  Manifest parsed;
  Status status = parseManifest(manifest.dump(2), "k.json", "", parsed);
  ASSERT_TRUE(status.ok()) << status.getMessage();
  EXPECT_EQ(parsed.entry, "ggemm_segment_matmul_kernel");
  EXPECT_EQ(parsed.problem.k, 7168);
  ASSERT_EQ(parsed.params.size(), 13u);
  EXPECT_EQ(parsed.params[12].name, "ldy");
}

} // namespace
} // namespace ggemm::runtime
