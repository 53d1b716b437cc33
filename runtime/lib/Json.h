//===- Json.h - Minimal strict JSON reader ----------------------*- C++ -*-===//
//
// A small RFC 8259 reader for manifests: no extensions (no comments, no
// trailing commas), duplicate object keys rejected, nesting depth bounded,
// every value tagged with its line and column for error messages.
//
//===----------------------------------------------------------------------===//

#ifndef GGEMM_RUNTIME_JSON_H
#define GGEMM_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ggemm::runtime::json {

class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind getKind() const { return kind; }
  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }
  /// True for numbers written without fraction or exponent that fit int64.
  bool isInteger() const { return kind == Kind::Number && integral; }

  bool getBool() const { return boolean; }
  double getNumber() const { return number; }
  int64_t getInteger() const { return integer; }
  const std::string &getString() const { return string; }
  const std::vector<Value> &getArray() const { return array; }
  const std::vector<std::pair<std::string, Value>> &getObject() const {
    return object;
  }
  /// The member named `key` of an object, or null when absent.
  const Value *find(std::string_view key) const;

  /// 1-based position of the value's first character in the source text.
  int getLine() const { return line; }
  int getColumn() const { return column; }

  /// "object", "string", ... for "expected X, got Y" messages.
  static const char *kindName(Kind kind);

private:
  friend class Parser;

  Kind kind = Kind::Null;
  bool boolean = false;
  bool integral = false;
  double number = 0;
  int64_t integer = 0;
  std::string string;
  std::vector<Value> array;
  std::vector<std::pair<std::string, Value>> object;
  int line = 0;
  int column = 0;
};

/// Parses `text` as one JSON document into `result`. On failure returns false
/// and sets `error` to "LINE:COLUMN: message".
bool parse(std::string_view text, Value &result, std::string &error);

} // namespace ggemm::runtime::json

#endif // GGEMM_RUNTIME_JSON_H
