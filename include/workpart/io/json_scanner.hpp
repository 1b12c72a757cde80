#pragma once
/// \file json_scanner.hpp
/// The JSON scanner the readers share (table_reader.hpp: cost tables; program_reader.hpp:
/// program descriptions): a cursor over the whole text in memory, numbers through
/// std::from_chars straight on the text (any JSON number, exponents included), whitespace
/// wherever JSON allows it; every error a `table_error` naming the source and the byte offset.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../error.hpp"

namespace workpart::detail::tables {

/// A cursor over the text that throws with the byte offset.
class scanner {
 public:
  scanner(std::string_view text, std::string_view source)
      : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), source_(source) {}

  const char* pos() const { return p_; }
  std::size_t offset(const char* at) const { return std::size_t(at - begin_); }
  /// Bytes not read yet: a bound on what the rest of the file can hold.
  std::size_t remaining() const { return std::size_t(end_ - p_); }

  /// "<source>: byte <n>: <what>".
  std::string where(const char* at, const std::string& what) const {
    return std::string(source_) + ": byte " + std::to_string(offset(at)) + ": " + what;
  }
  [[noreturn]] void fail(const char* at, const std::string& what) const {
    throw table_error(where(at, what));
  }
  [[noreturn]] void fail_shape(const char* at, const std::string& what) const {
    throw shape_error(where(at, what));
  }

  /// What is at the cursor, for messages: "'x'" or "the end of the file".
  std::string found() const {
    if (p_ >= end_) return "the end of the file";
    const unsigned char c = static_cast<unsigned char>(*p_);
    if (c < 0x20 || c >= 0x7f) {
      char buf[16];
      std::snprintf(buf, sizeof buf, "byte 0x%02x", unsigned(c));
      return buf;
    }
    return std::string("'") + char(c) + "'";
  }

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  /// The next character after whitespace ('\0' at the end).
  char peek() {
    ws();
    return p_ < end_ ? *p_ : '\0';
  }
  bool accept(char c) {
    ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c, const char* context) {
    ws();
    if (p_ >= end_ || *p_ != c)
      fail(p_, std::string("expected '") + c + "' " + context + ", found " + found());
    ++p_;
  }
  /// After an element of an array or object: true for ',', false for `close`.
  bool next(char close, const char* context) {
    ws();
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      return true;
    }
    if (p_ < end_ && *p_ == close) {
      ++p_;
      return false;
    }
    fail(p_, std::string("expected ',' or '") + close + "' " + context + ", found " + found());
  }
  void at_end() {
    ws();
    if (p_ != end_) fail(p_, "unexpected " + found() + " after the end of the top-level object");
  }

  /// A JSON string (the cursor after whitespace must be at '"'), escapes decoded.
  std::string string(const char* context) {
    ws();
    if (p_ >= end_ || *p_ != '"')
      fail(p_, std::string("expected a string ") + context + ", found " + found());
    const char* start = ++p_;
    while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20) ++p_;
    std::string out(start, p_);
    while (true) {
      if (p_ >= end_) fail(start - 1, "unterminated string");
      const char c = *p_;
      if (c == '"') {
        ++p_;
        return out;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        fail(p_, "control character inside a string; write it as an escape");
      if (c != '\\') {
        out += c;
        ++p_;
        continue;
      }
      if (++p_ >= end_) fail(start - 1, "unterminated string");
      switch (*p_) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
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
          std::uint32_t cp = hex4(p_ + 1);
          p_ += 4;
          if (cp >= 0xD800 && cp < 0xDC00 && end_ - p_ >= 7 && p_[1] == '\\' && p_[2] == 'u') {
            const std::uint32_t lo = hex4(p_ + 3);
            if (lo >= 0xDC00 && lo < 0xE000) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
              p_ += 6;
            }
          }
          utf8(out, cp);
          break;
        }
        default:
          fail(p_ - 1, "invalid escape '\\" + std::string(1, *p_) + "' in a string");
      }
      ++p_;
    }
  }

  /// A JSON number as a double (std::from_chars straight on the text; any JSON number).
  double number(const char* context) {
    ws();
    const char* start = p_;
    const bool digit_first =
        p_ < end_ && (is_digit(*p_) || (*p_ == '-' && end_ - p_ > 1 && is_digit(p_[1])));
    if (digit_first) {
      double x = 0;
      const auto [ptr, ec] = std::from_chars(p_, end_, x);
      if (ec == std::errc() && (ptr == end_ || is_delimiter(*ptr))) {
        p_ = ptr;
        return x;
      }
      const char* tok = start;  // the token, for the message
      while (tok < end_ && !is_delimiter(*tok)) ++tok;
      if (ec == std::errc::result_out_of_range)
        fail(start, "number '" + std::string(start, tok) + "' " + context +
                        " is out of the range of a double");
      fail(start, "malformed number '" + std::string(start, tok) + "' " + context);
    }
    fail(start, std::string("expected a number ") + context + ", found " + found());
  }

  /// A non-negative integer (any JSON number with an integral value below 2^53).
  std::int64_t integer(const char* context) {
    ws();
    const char* at = p_;
    const double x = number(context);
    if (!(x >= -9007199254740992.0 && x <= 9007199254740992.0) || std::floor(x) != x)
      fail(at, "expected an integer " + std::string(context) + ", found " + std::string(at, p_));
    return std::int64_t(x);
  }

  /// `true` or `false`.
  bool boolean(const char* context) {
    ws();
    if (literal("true")) return true;
    if (literal("false")) return false;
    fail(p_, std::string("expected true or false ") + context + ", found " + found());
  }

  /// Skips any JSON value (for unknown keys).
  void skip_value(int depth = 0) {
    if (depth > 512) fail(p_, "values nested more than 512 deep");
    const char c = peek();
    if (c == '"') {
      string("");
    } else if (c == '{') {
      ++p_;
      if (accept('}')) return;
      do {
        string("as an object key");
        expect(':', "after an object key");
        skip_value(depth + 1);
      } while (next('}', "in an object"));
    } else if (c == '[') {
      ++p_;
      if (accept(']')) return;
      do skip_value(depth + 1);
      while (next(']', "in an array"));
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      number("");
    } else if (literal("true") || literal("false") || literal("null")) {
    } else {
      fail(p_, "expected a JSON value, found " + found());
    }
  }

 private:
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_delimiter(char c) {
    return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }
  bool literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (std::size_t(end_ - p_) >= n && std::memcmp(p_, word, n) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  std::uint32_t hex4(const char* at) const {
    if (end_ - at < 4) fail(at - 2, "truncated \\u escape");
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = at[i];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= std::uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= std::uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= std::uint32_t(c - 'A' + 10);
      else
        fail(at - 2, "invalid \\u escape");
    }
    return v;
  }
  static void utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  const char* begin_;
  const char* p_;
  const char* end_;
  std::string_view source_;
};

}  // namespace workpart::detail::tables
