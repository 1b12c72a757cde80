#pragma once
/// \file repeat_blocks.hpp
/// wp::repeat_blocks: a network of N identical blocks priced from the description of the same
/// network written with three. A typed training step of a deep network (a 6 + 6 block
/// Transformer, ResNet's 23-block stage, an LSTM unrolled over 256 steps) costs minutes of
/// compile time per block; its description has the same shape for every block, renamed. So
/// write the network with three blocks, describe it (wp::describe), and repeat the middle one:
/// \code
///   auto d = wp::describe(step3.program);              // blocks enc1, enc2, enc3
///   auto d6 = wp::repeat_blocks(d, "enc", 6);          // enc1 .. enc6, priced as written so
///   wp::optimized r = wp::optimize(d6, 64, model);
/// \endcode
///
/// Blocks are named: a map or array belongs to block k of stem "enc" where its name carries
/// "enc" followed by the number k ("enc2.attn", "denc2.ffn.W", "sgd.enc2.ffn.b",
/// "zero.denc2.x": wp::backward's and the layers' derived names keep the token). The
/// description must have blocks 1, 2 and 3 of the stem and no other: block 1 is the first
/// (it reads what comes before), block 3 the last (what comes after reads it), block 2 a
/// middle one, the pattern repeated. Each block's names are relative to it: a copy of block 2
/// at position j has every token of the stem renumbered by j - 2 (its "enc1" input becomes
/// "enc<j-1>", its own "enc2" names "enc<j>"), block 3 becomes block N (renumbered by N - 3),
/// block 1 stays; a map outside the blocks may use the first and last blocks' arrays (the last
/// renamed to N), not the middle one's. Wherever the middle block's maps stand in the program
/// -- forward, backward, the zeroing and update maps -- its copies stand there in block order:
/// ascending where the first block comes before them or the last after them (forward,
/// updates), descending otherwise (the backward pass); a map of one block standing between two
/// maps of the next (the backward's unpad.<array> of a block's padded output, right after the
/// next block's map that wrote its gradient) goes with the next block. The arrays are listed in the
/// order the maps first use them, as wp::describe lists them. N = 3 gives the description back; N =
/// 2 drops the middle block. The result is checked (program_description::check). Repeat several
/// stems one after the other (the encoder's, then the decoder's).
///
/// Checked against networks written with 2, 3 and 4 blocks (tests/unit/test_describe.cpp):
/// the same description, but for where the maps that access nothing (wp::backward's pruned
/// zeroing maps, named after the gradient they would zero, not after the block that asked for
/// them) stand among themselves; the same optimum.

#include <cctype>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "block_names.hpp"
#include "program_description.hpp"

namespace workpart {

namespace detail {

/// Items of one list (maps or arrays) with the block each belongs to, copied in place: every
/// run of middle-block items becomes its copies for blocks 2 .. N - 1, in block order,
/// ascending or descending as the first and last blocks stand around the run.
template <class Item, class Owner, class Copy>
std::vector<Item> repeat_runs(const std::vector<Item>& items, Owner owner, Copy copy, long blocks) {
  std::vector<int> own(items.size());
  for (std::size_t k = 0; k < items.size(); ++k) own[k] = owner(items[k]);
  std::vector<Item> out;
  for (std::size_t k = 0; k < items.size();) {
    if (own[k] != 2) {
      out.push_back(copy(items[k], own[k], 0L));
      ++k;
      continue;
    }
    std::size_t end = k;
    while (end < items.size() && own[end] == 2) ++end;
    int before = 0, after = 0;  // the nearest first- or last-block item on each side
    for (std::size_t b = k; b-- > 0 && before == 0;)
      if (own[b] == 1 || own[b] == 3) before = own[b];
    for (std::size_t a = end; a < items.size() && after == 0; ++a)
      if (own[a] == 1 || own[a] == 3) after = own[a];
    const bool ascending = before == 1 || (before == 0 && after != 1);
    for (long c = 0; c < blocks - 2; ++c) {
      const long j = ascending ? 2 + c : blocks - 1 - c;
      for (std::size_t x = k; x < end; ++x) out.push_back(copy(items[x], 2, j));
    }
    k = end;
  }
  return out;
}

}  // namespace detail

/// The description `d` (blocks 1, 2 and 3 of `stem`) with `blocks` blocks: the middle block
/// repeated (see the file's comment). A shape_error naming the stem and the name at fault
/// where the blocks are not as described; the result's own check() otherwise.
inline program_description repeat_blocks(const program_description& d, const std::string& stem,
                                         long blocks) {
  auto fail = [&](const std::string& s) {
    throw shape_error("wp::repeat_blocks('" + stem + "', " + std::to_string(blocks) + "): " + s);
  };
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem.back())))
    fail("give a stem that does not end in a digit (blocks are named stem1, stem2, ...)");
  if (blocks < 2 || blocks > 100000) fail("give from 2 to 100000 blocks");
  d.check();
  // the block a name belongs to: 0 (none), or the one number its tokens carry, 1 to 3
  auto owner = [&](const std::string& name) {
    long k = 0;
    for (const auto& t : detail::block_tokens(name, stem)) {
      if (t.number < 1 || t.number > 3)
        fail("'" + name + "' names block " + stem + std::to_string(t.number) +
             "; describe the network with three blocks, " + stem + "1, " + stem + "2 and " + stem +
             "3");
      if (k != 0 && k != t.number)
        fail("'" + name + "' names two blocks; a map or array belongs to one");
      k = t.number;
    }
    return int(k);
  };
  bool has[4] = {false, false, false, false};
  for (const auto& m : d.maps) has[owner(m.name)] = true;
  for (int k = 1; k <= 3; ++k)
    if (!has[k])
      fail("no map's name carries '" + stem + std::to_string(k) + "'; describe the network with " +
           "three blocks, " + stem + "1, " + stem + "2 and " + stem + "3");
  // a name as seen from the item of block `own` placed at block `at` (copies of the middle
  // block: at = j; the last block: at = N; the first: at = 1; outside the blocks: at = 0)
  auto rename = [&](const std::string& name, int own, long at, const std::string& user) {
    if (own == 0)  // outside the blocks: the last block is block N, the first stays
      return detail::renumber_blocks(name, stem, [&](long k) {
        if (k == 2)
          fail("'" + user + "', outside the blocks, uses '" + name +
               "' of the middle block; only the first and last blocks' arrays can be used "
               "from outside them");
        return k == 3 ? blocks : k;
      });
    const long shift = own == 1 ? 0 : own == 2 ? at - 2 : blocks - 3;
    return detail::renumber_blocks(name, stem, [&](long k) { return k + shift; });
  };
  // Where a map of block k stands between two maps of block k + 1 it is block k + 1's by
  // place (wp::backward's unpad.<array> of block k's output, added right after block k + 1's
  // first map wrote it): it is copied with block k + 1, its names renumbered as that block's.
  std::vector<int> place(d.maps.size());
  for (std::size_t m = 0; m < d.maps.size(); ++m) place[m] = owner(d.maps[m].name);
  for (std::size_t m = 1; m + 1 < d.maps.size(); ++m) {
    const int k = owner(d.maps[m].name), before = place[m - 1], after = owner(d.maps[m + 1].name);
    if ((k == 1 || k == 2) && before == k + 1 && after == k + 1) place[m] = k + 1;
  }
  auto place_of = [&](const map_description& m) { return place[std::size_t(&m - d.maps.data())]; };
  program_description out;
  out.maps = detail::repeat_runs(
      d.maps, place_of,
      [&](const map_description& m, int own, long at) {
        map_description c = m;
        c.name = rename(m.name, own, at, m.name);
        for (auto& ac : c.accesses) {  // the text begins with the array's name
          std::string renamed = rename(ac.array, own, at, m.name);
          if (ac.text.rfind(ac.array, 0) == 0) ac.text.replace(0, ac.array.size(), renamed);
          ac.array = std::move(renamed);
        }
        return c;
      },
      blocks);
  // the arrays in the order the maps first use them, as wp::describe lists them (its blocks'
  // arrays are first used by the maps of a neighbouring block: "dblk1.h" by block 2's
  // backward); those no map uses after them, in their blocks' order
  auto copied = detail::repeat_runs(
      d.arrays, [&](const array_description& a) { return owner(a.name); },
      [&](const array_description& a, int own, long at) {
        array_description c = a;
        c.name = rename(a.name, own, at, a.name);
        return c;
      },
      blocks);
  detail::place_arrays_by_first_use(out, std::move(copied));
  out.check();
  return out;
}

}  // namespace workpart
