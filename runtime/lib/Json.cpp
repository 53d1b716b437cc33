//===- Json.cpp - Minimal strict JSON reader ------------------------------===//

#include "Json.h"

#include <cmath>
#include <limits>
#include <locale>
#include <sstream>

namespace ggemm::runtime::json {

const Value *Value::find(std::string_view key) const {
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *Value::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "value";
}

namespace {
// Deep enough for any manifest, shallow enough that recursion cannot exhaust
// the stack on hostile input.
constexpr int kMaxDepth = 64;
} // namespace

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  bool parseDocument(Value &result) {
    // A UTF-8 byte order mark is tolerated: some editors write one.
    if (text.substr(0, 3) == "\xEF\xBB\xBF")
      advance(3);
    skipWhitespace();
    if (!parseValue(result, 0))
      return false;
    skipWhitespace();
    if (position != text.size())
      return fail("unexpected '" + describeChar() + "' after the JSON value");
    return true;
  }

  const std::string &getError() const { return error; }

private:
  std::string_view text;
  size_t position = 0;
  int line = 1;
  int column = 1;
  std::string error;

  bool atEnd() const { return position >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[position]; }

  void advance(size_t count = 1) {
    for (size_t i = 0; i < count && !atEnd(); ++i) {
      if (text[position] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
      ++position;
    }
  }

  std::string describeChar() const {
    if (atEnd())
      return "end of input";
    unsigned char c = static_cast<unsigned char>(text[position]);
    if (c < 0x20 || c >= 0x7f) {
      static const char *hex = "0123456789abcdef";
      return std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    return std::string(1, static_cast<char>(c));
  }

  bool fail(const std::string &message) {
    error =
        std::to_string(line) + ":" + std::to_string(column) + ": " + message;
    return false;
  }

  void skipWhitespace() {
    while (!atEnd()) {
      char c = peek();
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        return;
      advance();
    }
  }

  bool parseValue(Value &value, int depth) {
    if (depth > kMaxDepth)
      return fail("nesting deeper than " + std::to_string(kMaxDepth) +
                  " levels");
    value.line = line;
    value.column = column;
    char c = peek();
    if (atEnd())
      return fail("expected a value, got end of input");
    if (c == '{')
      return parseObject(value, depth);
    if (c == '[')
      return parseArray(value, depth);
    if (c == '"') {
      value.kind = Value::Kind::String;
      return parseString(value.string);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(value);
    if (matchKeyword("true")) {
      value.kind = Value::Kind::Bool;
      value.boolean = true;
      return true;
    }
    if (matchKeyword("false")) {
      value.kind = Value::Kind::Bool;
      value.boolean = false;
      return true;
    }
    if (matchKeyword("null")) {
      value.kind = Value::Kind::Null;
      return true;
    }
    if (c == '/')
      return fail("comments are not allowed in JSON");
    return fail("expected a value, got '" + describeChar() + "'");
  }

  bool matchKeyword(std::string_view keyword) {
    if (text.substr(position, keyword.size()) != keyword)
      return false;
    char next = position + keyword.size() < text.size()
                    ? text[position + keyword.size()]
                    : '\0';
    if ((next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
        (next >= '0' && next <= '9') || next == '_')
      return false;
    advance(keyword.size());
    return true;
  }

  bool parseObject(Value &value, int depth) {
    value.kind = Value::Kind::Object;
    advance(); // '{'
    skipWhitespace();
    if (peek() == '}') {
      advance();
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"') {
        if (peek() == '}')
          return fail("trailing comma before '}'");
        return fail("expected a string key, got '" + describeChar() + "'");
      }
      int keyLine = line, keyColumn = column;
      std::string key;
      if (!parseString(key))
        return false;
      if (value.find(key)) {
        line = keyLine;
        column = keyColumn;
        return fail("duplicate key \"" + key + "\"");
      }
      skipWhitespace();
      if (peek() != ':')
        return fail("expected ':' after key \"" + key + "\", got '" +
                    describeChar() + "'");
      advance();
      skipWhitespace();
      Value member;
      if (!parseValue(member, depth + 1))
        return false;
      value.object.emplace_back(std::move(key), std::move(member));
      skipWhitespace();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == '}') {
        advance();
        return true;
      }
      return fail("expected ',' or '}' after an object member, got '" +
                  describeChar() + "'");
    }
  }

  bool parseArray(Value &value, int depth) {
    value.kind = Value::Kind::Array;
    advance(); // '['
    skipWhitespace();
    if (peek() == ']') {
      advance();
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() == ']')
        return fail("trailing comma before ']'");
      Value element;
      if (!parseValue(element, depth + 1))
        return false;
      value.array.push_back(std::move(element));
      skipWhitespace();
      if (peek() == ',') {
        advance();
        continue;
      }
      if (peek() == ']') {
        advance();
        return true;
      }
      return fail("expected ',' or ']' after an array element, got '" +
                  describeChar() + "'");
    }
  }

  static int hexDigit(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parseHex4(unsigned &code) {
    code = 0;
    for (int i = 0; i < 4; ++i) {
      int digit = hexDigit(peek());
      if (atEnd() || digit < 0)
        return fail("expected 4 hexadecimal digits after \\u");
      code = code * 16 + static_cast<unsigned>(digit);
      advance();
    }
    return true;
  }

  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xC0 | (code >> 6));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else if (code < 0x10000) {
      out += static_cast<char>(0xE0 | (code >> 12));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (code >> 18));
      out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (code & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    advance(); // opening quote
    while (true) {
      if (atEnd())
        return fail("unterminated string");
      char c = peek();
      if (c == '"') {
        advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character " + describeChar() +
                    " in a string must be escaped");
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      advance(); // backslash
      char escape = peek();
      if (atEnd())
        return fail("unterminated string");
      advance();
      switch (escape) {
      case '"':
      case '\\':
      case '/':
        out += escape;
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
        unsigned code;
        if (!parseHex4(code))
          return false;
        if (code >= 0xDC00 && code <= 0xDFFF)
          return fail("unpaired low surrogate in \\u escape");
        if (code >= 0xD800 && code <= 0xDBFF) {
          if (peek() != '\\' || position + 1 >= text.size() ||
              text[position + 1] != 'u')
            return fail("unpaired high surrogate in \\u escape");
          advance(2);
          unsigned low;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return fail("unpaired high surrogate in \\u escape");
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, code);
        break;
      }
      default:
        return fail(std::string("invalid escape '\\") + escape + "'");
      }
    }
  }

  bool parseNumber(Value &value) {
    size_t start = position;
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      advance();
    }
    if (peek() == '0') {
      advance();
      if (peek() >= '0' && peek() <= '9')
        return fail("leading zeros are not allowed in numbers");
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9')
        advance();
    } else {
      return fail("expected a digit, got '" + describeChar() + "'");
    }
    bool integral = true;
    if (peek() == '.') {
      integral = false;
      advance();
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("expected a digit after '.'");
      while (peek() >= '0' && peek() <= '9')
        advance();
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      advance();
      if (peek() == '+' || peek() == '-')
        advance();
      if (!(peek() >= '0' && peek() <= '9'))
        return fail("expected a digit in the exponent");
      while (peek() >= '0' && peek() <= '9')
        advance();
    }
    std::string_view literal = text.substr(start, position - start);
    value.kind = Value::Kind::Number;

    if (integral) {
      // Accumulate as a negative number so that INT64_MIN fits.
      int64_t accumulator = 0;
      bool overflow = false;
      for (char c : literal.substr(negative ? 1 : 0)) {
        int digit = c - '0';
        if (accumulator < (std::numeric_limits<int64_t>::min() + digit) / 10) {
          overflow = true;
          break;
        }
        accumulator = accumulator * 10 - digit;
      }
      if (!overflow &&
          (negative || accumulator != std::numeric_limits<int64_t>::min())) {
        value.integral = true;
        value.integer = negative ? accumulator : -accumulator;
        value.number = static_cast<double>(value.integer);
        return true;
      }
    }
    // The classic locale keeps '.' the decimal point whatever the host
    // program has set.
    std::istringstream stream{std::string(literal)};
    stream.imbue(std::locale::classic());
    double number = 0;
    stream >> number;
    if (stream.fail() || !std::isfinite(number))
      return fail("number " + std::string(literal) + " is out of range");
    value.number = number;
    return true;
  }
};

bool parse(std::string_view text, Value &result, std::string &error) {
  Parser parser(text);
  result = Value();
  if (parser.parseDocument(result))
    return true;
  error = parser.getError();
  result = Value();
  return false;
}

} // namespace ggemm::runtime::json
