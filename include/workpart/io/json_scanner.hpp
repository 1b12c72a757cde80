#pragma once
/// \file json_scanner.hpp
/// The JSON scanner the readers share (table_reader.hpp: cost tables; program_reader.hpp:
/// program descriptions): a cursor over a window of the text, numbers through std::from_chars
/// straight on the window (any JSON number, exponents included), whitespace wherever JSON
/// allows it; every error a `table_error` naming the source and the byte offset in the text.
///
/// The window is the whole text where it is in memory (a string, a mapped file: nothing is
/// copied), or a buffer of `scanner::window_bytes` that a `text_source` refills as the cursor
/// reaches its end (a gzip'd file inflated as it is read: file_bytes.hpp). Only the unread
/// bytes are kept on a refill, so whitespace passes through the window and never accumulates;
/// the window grows only to hold a number token longer than half of it.
/// Positions (`pos()`, what `fail` takes) are byte offsets in the whole text, not pointers: a
/// refill moves the window.

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../error.hpp"

namespace workpart::detail::tables {

/// A text read in pieces into a scanner's window (file_bytes.hpp: gzip_source).
class text_source {
 public:
  virtual ~text_source() = default;
  /// Writes the next bytes of the text, at most `room` (> 0), at `out`; how many were
  /// written, 0 only at the end of the text. Throws table_error where the text cannot be read.
  virtual std::size_t read(char* out, std::size_t room) = 0;
  /// The most bytes the rest of the text can hold (for reserving no more than a file can fill).
  virtual std::size_t bound() const = 0;
};

/// A cursor over the text that throws with the byte offset.
class scanner {
 public:
  /// The window a streamed text is scanned in (the pieces inflated per refill).
  static constexpr std::size_t window_bytes = std::size_t(256) << 10;
  /// No position (a key not given).
  static constexpr std::size_t npos = std::size_t(-1);

  /// Over a text all in memory.
  scanner(std::string_view text, std::string_view source)
      : win_(text.data()), p_(text.data()), end_(text.data() + text.size()), source_(source) {}
  /// Over the text `src` reads, `window` bytes at a time (at least 16).
  scanner(text_source& src, std::string_view source, std::size_t window = window_bytes)
      : buf_(new char[std::max<std::size_t>(window, 16)]),
        cap_(std::max<std::size_t>(window, 16)),
        src_(&src),
        source_(source) {
    win_ = p_ = end_ = buf_.get();
  }
  scanner(const scanner&) = delete;
  scanner& operator=(const scanner&) = delete;

  std::string_view source() const { return source_; }
  /// The cursor's byte offset in the text.
  std::size_t pos() const { return base_ + std::size_t(p_ - win_); }
  /// Bytes not read yet (streamed: a bound): what the rest of the file can hold at most.
  std::size_t remaining() const { return std::size_t(end_ - p_) + (src_ ? src_->bound() : 0); }

  /// "<source>: byte <n>: <what>".
  std::string where(std::size_t at, const std::string& what) const {
    return std::string(source_) + ": byte " + std::to_string(at) + ": " + what;
  }
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    throw table_error(where(at, what));
  }
  [[noreturn]] void fail_shape(std::size_t at, const std::string& what) const {
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
    while (true) {  // (each way out returns at once: no test added to the in-memory path)
      if (p_ >= end_) {
        if (!more()) return;
      } else if (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t') {
        ++p_;
      } else {
        return;
      }
    }
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
      fail(pos(), std::string("expected '") + c + "' " + context + ", found " + found());
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
    fail(pos(), std::string("expected ',' or '") + close + "' " + context + ", found " + found());
  }
  /// Reads to the end of the text (a streamed one to its end: a gzip file's trailer checked).
  void at_end() {
    ws();
    if (p_ != end_) fail(pos(), "unexpected " + found() + " after the end of the top-level object");
  }

  /// A JSON string (the cursor after whitespace must be at '"'), escapes decoded.
  std::string string(const char* context) {
    ws();
    if (p_ >= end_ || *p_ != '"')
      fail(pos(), std::string("expected a string ") + context + ", found " + found());
    const std::size_t open = pos();
    ++p_;
    std::string out;
    while (true) {
      const char* run = p_;
      while (p_ < end_ && *p_ != '"' && *p_ != '\\' && static_cast<unsigned char>(*p_) >= 0x20)
        ++p_;
      out.append(run, std::size_t(p_ - run));
      if (p_ >= end_) {
        if (!more()) fail(open, "unterminated string");
        continue;
      }
      const char c = *p_;
      if (c == '"') {
        ++p_;
        return out;
      }
      if (c != '\\') fail(pos(), "control character inside a string; write it as an escape");
      if (!ensure(2)) fail(open, "unterminated string");
      switch (*++p_) {
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
          ensure(5);  // 'u' and four hex digits; hex4 reports fewer
          std::uint32_t cp = hex4(p_ + 1);
          p_ += 4;
          if (cp >= 0xD800 && cp < 0xDC00 && ensure(7) && p_[1] == '\\' && p_[2] == 'u') {
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
          fail(pos() - 1, "invalid escape '\\" + std::string(1, *p_) + "' in a string");
      }
      ++p_;
    }
  }

  /// A JSON number as a double (std::from_chars straight on the window; any JSON number).
  double number(const char* context) {
    ws();
    // the common case in one pass: a number, then a delimiter inside the window
    if (p_ < end_ && (is_digit(*p_) || (*p_ == '-' && end_ - p_ > 1 && is_digit(p_[1])))) {
      double x = 0;
      const auto [ptr, ec] = std::from_chars(p_, end_, x);
      if (ec == std::errc() && ptr < end_ && is_delimiter(*ptr)) {
        p_ = ptr;
        return x;
      }
    }
    return number_at_end(context);
  }

  /// A non-negative integer (any JSON number with an integral value below 2^53).
  std::int64_t integer(const char* context) {
    ws();
    const std::size_t at = pos();
    const double x = number(context);
    if (!(x >= -9007199254740992.0 && x <= 9007199254740992.0) || std::floor(x) != x)
      // number() leaves the token whole in the window, just before the cursor
      fail(at, "expected an integer " + std::string(context) + ", found " +
                   std::string(p_ - (pos() - at), p_));
    return std::int64_t(x);
  }

  /// `true` or `false`.
  bool boolean(const char* context) {
    ws();
    if (literal("true")) return true;
    if (literal("false")) return false;
    fail(pos(), std::string("expected true or false ") + context + ", found " + found());
  }

  /// Skips any JSON value (for unknown keys).
  void skip_value(int depth = 0) {
    if (depth > 512) fail(pos(), "values nested more than 512 deep");
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
      fail(pos(), "expected a JSON value, found " + found());
    }
  }

 private:
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }
  static bool is_delimiter(char c) {
    return c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }
  /// number(), where the token reaches the window's end (streamed: it may go on after it) or
  /// is not a number.
  double number_at_end(const char* context) {
    if (src_) whole_token();
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
        fail(pos(), "number '" + std::string(start, tok) + "' " + context +
                        " is out of the range of a double");
      fail(pos(), "malformed number '" + std::string(start, tok) + "' " + context);
    }
    fail(pos(), std::string("expected a number ") + context + ", found " + found());
  }

  /// The offset of a pointer into the window.
  std::size_t offset(const char* at) const { return base_ + std::size_t(at - win_); }

  /// More text after the window's end (streamed text only): false at the end of the text.
  bool more() { return src_ && refill(); }
  /// At least n unread bytes in the window, where the text has them.
  bool ensure(std::size_t n) {
    while (std::size_t(end_ - p_) < n)
      if (!more()) return false;
    return true;
  }
  /// The token at the cursor (up to a delimiter) whole in the window, for std::from_chars.
  void whole_token() {
    std::size_t n = 0;
    while (true) {
      while (p_ + n < end_ && !is_delimiter(p_[n])) ++n;
      if (p_ + n < end_ || !more()) return;
    }
  }
  /// Moves the unread bytes [p_, end_) to the buffer's start and reads more after them; false
  /// at the end of the text. The read bytes are dropped, so the window holds whitespace only
  /// until the cursor passes it; it doubles where the unread bytes fill half of it (one token
  /// that long), which keeps the moves linear in the text.
  [[gnu::noinline]] bool refill() {
    if (src_done_) return false;
    // (through a signed difference: GCC then sees no copy of 2^63 bytes or more)
    const std::ptrdiff_t unread = end_ - p_;
    const std::size_t kept = unread > 0 ? std::size_t(unread) : 0;
    base_ += std::size_t(p_ - win_);
    if (kept > cap_ / 2) {
      std::unique_ptr<char[]> bigger(new char[2 * cap_]);
      std::memcpy(bigger.get(), p_, kept);
      buf_ = std::move(bigger);
      cap_ *= 2;
    } else if (kept > 0) {
      std::memmove(buf_.get(), p_, kept);
    }
    win_ = p_ = buf_.get();
    end_ = p_ + kept;
    const std::size_t n = src_->read(buf_.get() + kept, cap_ - kept);
    end_ += n;
    src_done_ = n == 0;
    return n > 0;
  }

  bool literal(const char* word) {
    const std::size_t n = std::strlen(word);
    if (ensure(n) && std::memcmp(p_, word, n) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  std::uint32_t hex4(const char* at) const {
    if (end_ - at < 4) fail(offset(at) - 2, "truncated \\u escape");
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
        fail(offset(at) - 2, "invalid \\u escape");
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

  // [win_, end_): the window (the whole text in memory); win_ is byte base_ of the text
  std::unique_ptr<char[]> buf_;  // a streamed text's window
  std::size_t cap_ = 0;
  text_source* src_ = nullptr;
  bool src_done_ = false;
  std::size_t base_ = 0;
  const char* win_ = nullptr;
  const char* p_ = nullptr;
  const char* end_ = nullptr;
  std::string_view source_;
};

/// parse(s), where running out of memory (std::bad_alloc, std::length_error) is a table_error
/// at the byte reached: `content` names what the text holds ("cost tables").
template <class Parse>
auto scan_guarded(scanner& s, std::string_view content, Parse&& parse) -> decltype(parse(s)) {
  try {
    return parse(s);
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  // (outside the handlers: the exception and the values parsed are freed by now)
  s.fail(s.pos(), "out of memory while reading the " + std::string(content) +
                      ": the values read up to this byte need more memory than this process "
                      "may use");
}

/// scan_guarded over a text all in memory (`source` names it in errors): what each format's
/// parse_* function is.
template <class Parse>
auto scan_text(std::string_view text, std::string_view source, std::string_view content,
               Parse&& parse) -> decltype(parse(std::declval<scanner&>())) {
  scanner s(text, source);
  return scan_guarded(s, content, parse);
}

}  // namespace workpart::detail::tables
