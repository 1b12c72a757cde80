#pragma once
/// \file file_bytes.hpp
/// A file's text for the readers (table_reader.hpp, program_reader.hpp), scanned by
/// `scan_file`: a plain file mapped with mmap on POSIX (pages read ahead in one call; else
/// read) and scanned in place; gzip'd data (.json.gz) inflated as a stream into the scanner's
/// window (json_scanner.hpp), where the including target defines WORKPART_HAVE_ZLIB=1 and
/// links zlib (tools/CMakeLists.txt does), else refused with a message that says to gunzip it
/// first. A streamed file's memory is the window and what is parsed from it, whatever the
/// inflated size: whitespace is never held. Running out of memory while reading is a
/// `table_error` naming the file, never a bare std::bad_alloc.

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

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
#include "json_scanner.hpp"

namespace workpart::detail::tables {

/// A file's bytes in memory: mapped (POSIX; pages read ahead in one call) or read. `what`
/// names the kind of file in messages.
class file_bytes {
 public:
  explicit file_bytes(const std::string& path, std::string_view what = "cost-table file") {
#if WORKPART_TABLES_MMAP
    const int fd = ::open(path.c_str(), O_RDONLY);
    if (fd < 0)
      throw table_error("cannot open " + std::string(what) + " " + path + ": " +
                        std::strerror(errno));
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
    if (!f)
      throw table_error("cannot open " + std::string(what) + " " + path + ": " +
                        std::strerror(errno));
    char buf[1 << 16];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) text_.append(buf, got);
    const bool bad = std::ferror(f);
    std::fclose(f);
    if (bad) throw table_error("cannot read " + std::string(what) + " " + path);
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
/// on what a gzip'd file may inflate to. The inflated text is streamed, never held whole, so
/// the cap is a guard against gzip bombs, not the memory of the text: it bounds the time spent
/// inflating and the values a small file can make the reader parse (a number takes two bytes
/// of text at least).
inline std::size_t default_inflate_cap() {
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGESIZE)
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) return std::size_t(pages) / 2 * std::size_t(page);
#endif
  return std::size_t(16) << 30;
}

inline bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
/// gzip data inflated piece by piece into the scanner's window as it asks for more
/// (concatenated members, as `gzip -c a b > c` writes, read as one text), at most `cap`
/// bytes in all (0: default_inflate_cap()).
class gzip_source final : public text_source {
 public:
  gzip_source(std::string_view data, const std::string& path, std::string_view what,
              std::size_t cap)
      : in_(reinterpret_cast<const Bytef*>(data.data())),
        in_left_(data.size()),
        path_(path),
        what_(what),
        cap_(cap ? cap : default_inflate_cap()) {
    if (inflateInit2(&z_, 15 + 32) != Z_OK) throw table_error("cannot start zlib to read " + path);
  }
  gzip_source(const gzip_source&) = delete;
  gzip_source& operator=(const gzip_source&) = delete;
  ~gzip_source() override { inflateEnd(&z_); }

  std::size_t read(char* out, std::size_t room) override {
    if (done_) return 0;
    // one byte past the cap at most: enough to tell a text over it, not a byte more inflated
    if (cap_ - total_ < room) room = cap_ - total_ + 1;
    room = std::min(room, std::size_t(1) << 30);  // avail_out is 32 bits
    z_.next_out = reinterpret_cast<Bytef*>(out);
    z_.avail_out = static_cast<uInt>(room);
    while (z_.avail_out > 0) {
      if (z_.avail_in == 0) feed();
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        // concatenated gzip members: go on with the next one
        if (z_.avail_in == 0) feed();
        if (z_.avail_in > 0 && inflateReset(&z_) == Z_OK) continue;
        done_ = true;
        break;
      }
      const bool no_input = z_.avail_in == 0 && in_left_ == 0;
      if (rc == Z_OK && !(no_input && z_.avail_out != 0)) continue;
      fail(rc == Z_OK || (rc == Z_BUF_ERROR && no_input)
               ? std::string("the gzip data ends early")
               : "zlib error " + std::to_string(rc) + (z_.msg ? std::string(": ") + z_.msg : ""));
    }
    const std::size_t n = room - z_.avail_out;
    total_ += n;
    if (total_ > cap_)
      throw table_error(std::string(what_) + " " + path_ + " inflates to more than " +
                        std::to_string(cap_) +
                        " bytes, the cap on gzip'd files (half of this machine's memory "
                        "unless set: workpart-optimize --max-inflated BYTES, or "
                        "read_cost_tables(path, {.max_inflated_bytes = ...})); is it a gzip "
                        "bomb? gunzip it first if it is real");
    return n;
  }

  /// Deflate expands a byte to 1032 at most: the input left bounds the text left.
  std::size_t bound() const override {
    const std::size_t in = std::size_t(z_.avail_in) + in_left_;
    const std::size_t most =
        in > (std::size_t(-1) - 65536) / 1032 ? std::size_t(-1) : in * 1032 + 65536;
    return std::min(most, cap_ - std::min(cap_, total_));
  }

 private:
  /// The next piece of input (avail_in is 32 bits: a file over 4 GiB goes in pieces).
  void feed() {
    const std::size_t n = std::min(in_left_, std::size_t(1) << 30);
    z_.next_in = const_cast<Bytef*>(in_);
    z_.avail_in = static_cast<uInt>(n);
    in_ += n;
    in_left_ -= n;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw table_error("cannot gunzip " + std::string(what_) + " " + path_ + " (" + why +
                      "); is it truncated?");
  }

  z_stream z_{};
  const Bytef* in_;
  std::size_t in_left_;
  const std::string& path_;
  std::string_view what_;
  std::size_t cap_;
  std::size_t total_ = 0;
  bool done_ = false;
};
#endif

/// parse(s) on a scanner over the file at `path`: in place where the file is plain, inflated as
/// a stream where it is gzip'd (to at most `max_inflated` bytes; 0: default_inflate_cap()).
/// `what` names the file ("cost-table file"), `content` its text ("cost tables"). Running out
/// of memory is a table_error naming the file: at the byte reached while scanning, else while
/// reading the file in.
template <class Parse>
auto scan_file(const std::string& path, std::string_view what, std::string_view content,
               std::size_t max_inflated, Parse&& parse)
    -> decltype(parse(std::declval<scanner&>())) {
  try {
    const file_bytes bytes(path, what);
    if (!is_gzip(bytes.view())) {
      scanner s(bytes.view(), path);
      return scan_guarded(s, content, parse);
    }
#if defined(WORKPART_HAVE_ZLIB) && WORKPART_HAVE_ZLIB
    gzip_source src(bytes.view(), path, what, max_inflated);
    scanner s(src, path);
    return scan_guarded(s, content, parse);
#else
    (void)max_inflated;
    throw table_error(std::string(what) + " " + path +
                      " is gzip-compressed and this build reads no gzip (it was built without "
                      "zlib); run `gzip -dk " +
                      path + "` and pass the .json file");
#endif
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  // (outside the handlers: the exception and what was read are freed by now)
  throw table_error("out of memory while reading " + std::string(what) + " " + path +
                    " into memory");
}

}  // namespace workpart::detail::tables
