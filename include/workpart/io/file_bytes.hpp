#pragma once
/// \file file_bytes.hpp
/// A file's bytes for the readers (table_reader.hpp, program_reader.hpp): mapped with mmap on
/// POSIX (pages read ahead in one call), else read. Gzip'd data (.json.gz) is inflated where
/// the including target defines WORKPART_HAVE_ZLIB=1 and links zlib (tools/CMakeLists.txt
/// does); otherwise it is refused with a message that says to gunzip it first.

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
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

namespace workpart::detail::tables {

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
}  // namespace workpart::detail::tables
