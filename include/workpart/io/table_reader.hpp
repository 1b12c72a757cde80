#pragma once
/// \file table_reader.hpp
/// Reads and writes cost-table files (the JSON of /work/shared/anchors/pase-tables/README.md):
/// \code
///   {"vertices": [{"name": "Conv_1", "configs": [[1,1],[1,2],[2,1]], "cost": [3.0, 2.0, 2.5]},
///   ...],
///    "edges":    [{"u": 0, "v": 1, "cost": [[0, 1.5], [2, 0], [1e3, 0]]}, ...]}
/// \endcode
/// A hand-written scanner over the whole file in memory (mapped with mmap on POSIX, else
/// read): numbers go through std::from_chars straight on the text (any JSON number, exponents
/// included; about 300-400 MB/s here), whitespace may appear anywhere JSON allows it, keys
/// come in any order and unknown keys are skipped. "name" and "configs" are optional (a
/// vertex without a name is called v<i>); "cost" is required. Errors name the file and the
/// byte offset: `table_error` for malformed JSON, a missing key, an edge to an unknown vertex,
/// a duplicate edge; `shape_error` for a matrix or a configuration list of the wrong size.
///
/// Gzip'd files (.json.gz) are read when the including target defines WORKPART_HAVE_ZLIB=1
/// and links zlib (tools/CMakeLists.txt does); otherwise they are refused with a message
/// that says to gunzip them first.
///
/// `write_cost_tables(g)` writes the same format (numbers in shortest round-trip form).
///
/// This header includes no MPI and no Eigen (it includes Boost.Graph, via cost_graph.hpp).

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
#include <zlib.h>
#endif

#if defined(__unix__) && \
    __has_include(<sys/mman.h>) && __has_include(<fcntl.h>) && __has_include(<unistd.h>)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(MAP_POPULATE)
#define WORKPART_TABLES_MMAP 1
#endif
#endif
#ifndef WORKPART_TABLES_MMAP
#define WORKPART_TABLES_MMAP 0
#endif

#include "../error.hpp"
#include "../optimize/cost_graph.hpp"

namespace workpart {

namespace detail::tables {

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

struct raw_vertex {
  const char* at = nullptr;
  std::string name;
  bool has_name = false, has_cost = false, has_configs = false;
  std::vector<double> cost;
  std::vector<std::int64_t> configs;
  std::size_t dims = 0, num_configs = 0;
};

struct raw_edge {
  const char* at = nullptr;
  const char* u_at = nullptr;
  const char* v_at = nullptr;
  std::int64_t u = -1, v = -1;
  bool has_u = false, has_v = false, has_cost = false;
  std::vector<double> cost;
  std::size_t rows = 0, cols = 0;
};

/// Marks a key of one object as seen; a second occurrence is an error.
inline void once(scanner& s, bool& seen, const char* at, const char* key,
                 const std::string& object) {
  if (seen) s.fail(at, "key \"" + std::string(key) + "\" appears twice in " + object);
  seen = true;
}

inline void parse_vertex(scanner& s, raw_vertex& rv, std::size_t index) {
  const std::string object = "vertex " + std::to_string(index);
  s.ws();
  rv.at = s.pos();
  s.expect('{', ("at the start of " + object).c_str());
  if (s.accept('}')) return;
  do {
    const char* key_at = (s.ws(), s.pos());
    const std::string key = s.string("as a key of a vertex");
    s.expect(':', "after a key");
    if (key == "name") {
      once(s, rv.has_name, key_at, "name", object);
      rv.name = s.string(("as the name of " + object).c_str());
    } else if (key == "cost") {
      once(s, rv.has_cost, key_at, "cost", object);
      s.expect('[', ("to open the cost list of " + object).c_str());
      if (!s.accept(']')) {
        do rv.cost.push_back(s.number("in a vertex cost list"));
        while (s.next(']', "in a vertex cost list"));
      }
    } else if (key == "configs") {
      once(s, rv.has_configs, key_at, "configs", object);
      s.expect('[', ("to open the configuration list of " + object).c_str());
      if (!s.accept(']')) {
        do {
          const char* tuple_at = (s.ws(), s.pos());
          s.expect('[', "to open a configuration tuple");
          std::size_t len = 0;
          if (!s.accept(']')) {
            do {
              rv.configs.push_back(s.integer("in a configuration tuple"));
              ++len;
            } while (s.next(']', "in a configuration tuple"));
          }
          if (rv.num_configs == 0) {
            rv.dims = len;
          } else if (len != rv.dims) {
            s.fail_shape(tuple_at, object + ": configuration " + std::to_string(rv.num_configs) +
                                       " has " + std::to_string(len) +
                                       " factors, configuration 0 has " + std::to_string(rv.dims));
          }
          ++rv.num_configs;
        } while (s.next(']', "in a configuration list"));
      }
    } else {
      s.skip_value();
    }
  } while (s.next('}', ("in " + object).c_str()));
}

/// `vertices`: those read so far, to size the matrix when "u" and "v" come before "cost".
inline void parse_edge(scanner& s, raw_edge& re, std::size_t index,
                       const std::vector<raw_vertex>& vertices) {
  const std::string object = "edge " + std::to_string(index);
  s.ws();
  re.at = s.pos();
  s.expect('{', ("at the start of " + object).c_str());
  if (s.accept('}')) return;
  do {
    const char* key_at = (s.ws(), s.pos());
    const std::string key = s.string("as a key of an edge");
    s.expect(':', "after a key");
    if (key == "u") {
      once(s, re.has_u, key_at, "u", object);
      re.u_at = (s.ws(), s.pos());
      re.u = s.integer(("as the source vertex of " + object).c_str());
    } else if (key == "v") {
      once(s, re.has_v, key_at, "v", object);
      re.v_at = (s.ws(), s.pos());
      re.v = s.integer(("as the target vertex of " + object).c_str());
    } else if (key == "cost") {
      once(s, re.has_cost, key_at, "cost", object);
      s.expect('[', ("to open the cost matrix of " + object).c_str());
      if (re.has_u && re.has_v && re.u >= 0 && re.v >= 0 && std::size_t(re.u) < vertices.size() &&
          std::size_t(re.v) < vertices.size())
        // as much as the sizes claim, but no more than the rest of the file can hold (a
        // number and its comma take two bytes at least): a claim is not an allocation
        re.cost.reserve(std::min(
            vertices[std::size_t(re.u)].cost.size() * vertices[std::size_t(re.v)].cost.size(),
            s.remaining() / 2));
      if (!s.accept(']')) {
        do {
          const char* row_at = (s.ws(), s.pos());
          s.expect('[', ("to open a row of the cost matrix of " + object).c_str());
          std::size_t len = 0;
          if (!s.accept(']')) {
            do {
              re.cost.push_back(s.number("in an edge cost matrix"));
              ++len;
            } while (s.next(']', "in a row of an edge cost matrix"));
          }
          if (re.rows == 0) {
            re.cols = len;
          } else if (len != re.cols) {
            s.fail_shape(row_at, object + ": row " + std::to_string(re.rows) +
                                     " of the cost matrix has " + std::to_string(len) +
                                     " entries, row 0 has " + std::to_string(re.cols));
          }
          ++re.rows;
        } while (s.next(']', ("in the cost matrix of " + object).c_str()));
      }
    } else {
      s.skip_value();
    }
  } while (s.next('}', ("in " + object).c_str()));
}

}  // namespace detail::tables

/// Parses the text of a cost-table file; `source` names it in error messages.
namespace detail::tables {
inline cost_graph parse(scanner& s);
}  // namespace detail::tables

inline cost_graph parse_cost_tables(std::string_view text, std::string_view source = "<input>") {
  detail::tables::scanner s(text, source);
  try {
    return detail::tables::parse(s);
  } catch (const std::bad_alloc&) {
    s.fail(s.pos(), "out of memory while reading the cost tables (" + std::to_string(text.size()) +
                        " bytes of text; their matrices need more "
                        "memory than this process has)");
  }
}

inline cost_graph detail::tables::parse(scanner& s) {
  std::vector<raw_vertex> vertices;
  std::vector<raw_edge> edges;
  bool has_vertices = false, has_edges = false;
  const char* top = (s.ws(), s.pos());
  s.expect('{', "at the start of a cost-table file");
  if (!s.accept('}')) {
    do {
      const char* key_at = (s.ws(), s.pos());
      const std::string key = s.string("as a top-level key");
      s.expect(':', "after a key");
      if (key == "vertices") {
        once(s, has_vertices, key_at, "vertices", "the top-level object");
        s.expect('[', "to open the vertex list");
        if (!s.accept(']')) {
          do {
            vertices.emplace_back();
            parse_vertex(s, vertices.back(), vertices.size() - 1);
          } while (s.next(']', "in the vertex list"));
        }
      } else if (key == "edges") {
        once(s, has_edges, key_at, "edges", "the top-level object");
        s.expect('[', "to open the edge list");
        if (!s.accept(']')) {
          do {
            edges.emplace_back();
            parse_edge(s, edges.back(), edges.size() - 1, vertices);
          } while (s.next(']', "in the edge list"));
        }
      } else {
        s.skip_value();
      }
    } while (s.next('}', "in the top-level object"));
  }
  s.at_end();
  if (!has_vertices) s.fail(top, "no \"vertices\" key in the top-level object");

  cost_graph g;
  for (std::size_t i = 0; i < vertices.size(); ++i) {
    auto& rv = vertices[i];
    const std::string object =
        "vertex " + std::to_string(i) + (rv.has_name ? " (\"" + rv.name + "\")" : "");
    if (!rv.has_cost) s.fail(rv.at, object + " has no \"cost\" list");
    if (rv.cost.empty())
      s.fail_shape(rv.at, object + " has an empty \"cost\" list; a vertex needs a configuration");
    if (rv.has_configs && rv.num_configs != rv.cost.size())
      s.fail_shape(rv.at, object + " has " + std::to_string(rv.num_configs) +
                              " configurations but " + std::to_string(rv.cost.size()) +
                              " costs; give one cost per configuration");
    if (rv.has_configs && rv.dims == 0)
      s.fail_shape(rv.at, object + " has configuration tuples of length 0");
    g.add_vertex_flat(rv.has_name ? std::move(rv.name) : "v" + std::to_string(i),
                      std::move(rv.cost), std::move(rv.configs), rv.has_configs ? rv.dims : 0);
  }
  const std::size_t n = vertices.size();
  for (std::size_t i = 0; i < edges.size(); ++i) {
    auto& re = edges[i];
    const std::string object = "edge " + std::to_string(i);
    if (!re.has_u || !re.has_v)
      s.fail(re.at, object + " has no \"" + (re.has_u ? "v" : "u") + "\"");
    if (!re.has_cost) s.fail(re.at, object + " has no \"cost\" matrix");
    if (re.u < 0 || std::size_t(re.u) >= n)
      s.fail(re.u_at, object + ": \"u\": " + std::to_string(re.u) + " is not a vertex (there are " +
                          std::to_string(n) + ", numbered from 0)");
    if (re.v < 0 || std::size_t(re.v) >= n)
      s.fail(re.v_at, object + ": \"v\": " + std::to_string(re.v) + " is not a vertex (there are " +
                          std::to_string(n) + ", numbered from 0)");
    const std::size_t u = std::size_t(re.u), v = std::size_t(re.v);
    if (u == v) s.fail(re.at, object + " goes from vertex " + std::to_string(u) + " to itself");
    if (boost::edge(u, v, g.graph()).second)
      s.fail(re.at, object + " (" + std::to_string(u) + " -> " + std::to_string(v) + ", " +
                        g.name(u) + " -> " + g.name(v) + ") duplicates edge " +
                        std::to_string(g.graph()[boost::edge(u, v, g.graph()).first].index) +
                        "; at most one edge per vertex pair");
    if (re.rows != g.num_configs(u) || re.cols != g.num_configs(v))
      s.fail_shape(re.at, object + " (" + g.name(u) + " -> " + g.name(v) + "): cost matrix is " +
                              std::to_string(re.rows) + " x " + std::to_string(re.cols) +
                              ", expected " + std::to_string(g.num_configs(u)) + " x " +
                              std::to_string(g.num_configs(v)) +
                              " (configurations of u x configurations of v)");
    g.add_edge(u, v, std::move(re.cost));
  }
  return g;
}

namespace detail::tables {

/// A file's bytes in memory: mapped (POSIX; pages read ahead in one call) or read.
class file_bytes {
 public:
  explicit file_bytes(const std::string& path) {
#if WORKPART_TABLES_MMAP
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0)
      throw table_error("cannot open cost-table file " + path + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
      void* p =
          ::mmap(nullptr, std::size_t(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
      if (p != MAP_FAILED) {
        map_ = p;
        size_ = std::size_t(st.st_size);
        ::close(fd);
        return;
      }
    }
    ::close(fd);
#endif
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw table_error("cannot open cost-table file " + path + ": " + std::strerror(errno));
    char buf[1 << 16];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text_.append(buf, got);
    const bool bad = std::ferror(f);
    std::fclose(f);
    if (bad) throw table_error("cannot read cost-table file " + path);
    size_ = text_.size();
  }
  file_bytes(const file_bytes&) = delete;
  file_bytes& operator=(const file_bytes&) = delete;
  ~file_bytes() {
#if WORKPART_TABLES_MMAP
    if (map_) ::munmap(map_, size_);
#endif
  }
  std::string_view view() const {
    return map_ ? std::string_view(static_cast<const char*>(map_), size_) : std::string_view(text_);
  }

 private:
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::string text_;
};

/// Half of this machine's physical memory (16 GiB where it cannot be asked): the default cap
/// on what a gzip'd cost-table file may inflate to.
inline std::size_t default_inflate_cap() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return std::size_t(pages) / 2 * std::size_t(page);
#endif
  return std::size_t(16) << 30;
}

/// gzip data, inflated to at most `cap` bytes (0: default_inflate_cap()); throws when this
/// build has no zlib.
inline std::string gunzip(std::string_view data, const std::string& path, std::size_t cap = 0) {
#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
  if (cap == 0) cap = default_inflate_cap();
  std::string out;
  if (data.size() >= 18) {
    // ISIZE, the uncompressed size mod 2^32, is a good first guess but only a claim: reserve
    // no more than deflate can expand these bytes to (1032:1) and than the cap
    const auto* t = reinterpret_cast<const unsigned char*>(data.data() + data.size() - 4);
    const std::size_t isize = std::size_t(t[0]) | std::size_t(t[1]) << 8 | std::size_t(t[2]) << 16 |
                              std::size_t(t[3]) << 24;
    out.reserve(std::min({isize, data.size() * 1032, cap}));
  }
  if (data.size() > std::size_t(0xFFFFFFFFu))
    throw table_error("cost-table file " + path + " is a gzip file over 4 GiB; gunzip it first");
  char buf[1 << 16];
  z_stream z{};
  if (inflateInit2(&z, 15 + 32) != Z_OK) throw table_error("cannot start zlib to read " + path);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  while (true) {
    z.next_out = reinterpret_cast<Bytef*>(buf);
    z.avail_out = sizeof buf;
    const int rc = inflate(&z, Z_NO_FLUSH);
    const std::size_t n = sizeof buf - z.avail_out;
    if (out.size() + n > cap) {
      inflateEnd(&z);
      throw table_error("cost-table file " + path + " inflates to more than " +
                        std::to_string(cap) +
                        " bytes, the cap on gzip'd tables (half of this machine's memory "
                        "unless set: workpart-optimize --max-inflated BYTES, or "
                        "read_cost_tables(path, {.max_inflated_bytes = ...})); is it a gzip "
                        "bomb? gunzip it first if it is real");
    }
    try {
      out.append(buf, n);
    } catch (const std::bad_alloc&) {
      inflateEnd(&z);
      throw table_error("out of memory while inflating cost-table file " + path + " (at " +
                        std::to_string(out.size()) + " bytes); gunzip it first");
    }
    if (rc == Z_STREAM_END) {
      // concatenated gzip members (gzip -c a b > c): go on with the next one
      if (z.avail_in > 0 && inflateReset(&z) == Z_OK) continue;
      break;
    }
    if (rc != Z_OK || (z.avail_in == 0 && z.avail_out != 0)) {
      const std::string why = rc != Z_OK ? "zlib error " + std::to_string(rc) +
                                               (z.msg ? std::string(": ") + z.msg : std::string())
                                         : std::string("the gzip data ends early");
      inflateEnd(&z);
      throw table_error("cannot gunzip cost-table file " + path + " (" + why +
                        "); is it truncated?");
    }
  }
  inflateEnd(&z);
  return out;
#else
  (void)data;
  (void)cap;
  throw table_error("cost-table file " + path +
                    " is gzip-compressed and this build reads no gzip (it was built without zlib); "
                    "run `gzip -dk " +
                    path + "` and pass the .json file");
#endif
}

inline bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

}  // namespace detail::tables

/// How read_cost_tables reads a file.
struct table_read_options {
  /// The most bytes a gzip'd file may inflate to; 0: half of this machine's memory.
  std::size_t max_inflated_bytes = 0;
};

/// Reads a cost-table file (plain JSON, or gzip'd when built with zlib; see the file comment).
/// \code
///   wp::cost_graph g = wp::read_cost_tables("alexnet_p8.json");
///   auto r = wp::pase_search(g);
/// \endcode
inline cost_graph read_cost_tables(const std::string& path, const table_read_options& opt = {}) {
  const detail::tables::file_bytes bytes(path);
  if (detail::tables::is_gzip(bytes.view()))
    return parse_cost_tables(detail::tables::gunzip(bytes.view(), path, opt.max_inflated_bytes),
                             path);
  return parse_cost_tables(bytes.view(), path);
}

/// The cost-table JSON of g (numbers in shortest round-trip form): what
/// `parse_cost_tables` reads back into an equal graph.
inline std::string write_cost_tables(const cost_graph& g) {
  std::string out;
  char buf[64];
  auto num = [&](double x) {
    const auto r = std::to_chars(buf, buf + sizeof buf, x);
    out.append(buf, r.ptr);
  };
  auto quoted = [&](const std::string& s) {
    out += '"';
    for (char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(static_cast<unsigned char>(c)));
        out += buf;
      } else {
        out += c;
      }
    }
    out += '"';
  };
  out += "{\"vertices\": [\n";
  for (std::size_t v = 0; v < g.num_vertices(); ++v) {
    out += "{\"name\": ";
    quoted(g.name(v));
    if (!g.config(v, 0).empty()) {
      out += ", \"configs\": [";
      for (std::size_t k = 0; k < g.num_configs(v); ++k) {
        out += k ? ",[" : "[";
        const auto c = g.config(v, k);
        for (std::size_t i = 0; i < c.size(); ++i) {
          if (i) out += ',';
          out += std::to_string(c[i]);
        }
        out += ']';
      }
      out += ']';
    }
    out += ", \"cost\": [";
    for (std::size_t k = 0; k < g.num_configs(v); ++k) {
      if (k) out += ',';
      num(g.vertex_cost(v, k));
    }
    out += v + 1 < g.num_vertices() ? "]},\n" : "]}\n";
  }
  out += "],\n\"edges\": [\n";
  for (std::size_t e = 0; e < g.num_edges(); ++e) {
    const std::size_t u = g.edge_source(e), v = g.edge_target(e);
    out += "{\"u\": " + std::to_string(u) + ", \"v\": " + std::to_string(v) + ", \"cost\": [";
    for (std::size_t ku = 0; ku < g.num_configs(u); ++ku) {
      out += ku ? ",[" : "[";
      for (std::size_t kv = 0; kv < g.num_configs(v); ++kv) {
        if (kv) out += ',';
        num(g.edge_cost(e, ku, kv));
      }
      out += ']';
    }
    out += e + 1 < g.num_edges() ? "]},\n" : "]}\n";
  }
  out += "]}\n";
  return out;
}

}  // namespace workpart
