#pragma once
/// \file join_descriptions.hpp
/// wp::join_descriptions: descriptions run one after the other, as wp::program concatenates
/// typed programs. A network whose typed training step is too long to compile as one program
/// (InceptionV3's 94 convolutions, about 4500 maps, differ module by module so that
/// wp::repeat_blocks cannot lengthen a shorter one) is described piece by piece -- each piece's
/// forward, backward and update programs described apart (wp::describe) -- and joined:
/// \code
///   auto d = wp::join_descriptions({stem.forward, m5b.forward, ..., head.backward, ...,
///                                   m5b.backward, stem.backward, stem.update, ...});
/// \endcode
/// Arrays are one array where their names are: a piece's output is the next piece's input
/// when both call it alike (same shape, element size and type, and both generated in place
/// or neither: a shape_error naming both parts otherwise). Maps keep their order and names
/// (two maps of one name: a shape_error); the arrays are listed in the order the maps first use
/// them, as wp::describe lists them, those no map uses after them. The result is checked
/// (program_description::check).
///
/// wp::join_pieces orders a training step's pieces so: every piece's forward maps in order,
/// their backward maps last piece first, their updates in order; and splices each piece's
/// backward to the next one's (see step_piece).

#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "program_description.hpp"

namespace workpart {

/// The program that runs `parts`' maps in the order given, each part's in its own order; its
/// arrays one per name (see the file's comment).
inline program_description join_descriptions(const std::vector<program_description>& parts) {
  auto fail = [](const std::string& s) { throw shape_error("wp::join_descriptions: " + s); };
  auto shape_text = [](const array_description& a) {
    std::string s = "(";
    for (std::size_t k = 0; k < a.shape.size(); ++k)
      s += (k ? ", " : "") + std::to_string(a.shape[k]);
    return s + ") of " + (a.type.empty() ? std::to_string(a.elem_size) + "-byte" : a.type) +
           (a.init ? ", generated in place" : "");
  };
  program_description out;
  std::vector<array_description> arrays;  // every part's, one per name, in parts' order
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>> seen;  // index, part
  std::unordered_set<std::string> map_names;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    for (const auto& a : parts[p].arrays) {
      const auto [it, fresh] = seen.emplace(a.name, std::make_pair(arrays.size(), p));
      if (fresh) {
        arrays.push_back(a);
        continue;
      }
      const array_description& b = arrays[it->second.first];
      if (a.shape != b.shape || a.elem_size != b.elem_size || a.type != b.type || a.init != b.init)
        fail("array '" + a.name + "' is " + shape_text(b) + " in part " +
             std::to_string(it->second.second) + " but " + shape_text(a) + " in part " +
             std::to_string(p) + "; an array joins parts by its name, so give them one array");
    }
    for (const auto& m : parts[p].maps) {
      if (!map_names.insert(m.name).second)
        fail("two maps are called '" + m.name + "' (one in part " + std::to_string(p) +
             "); a description names its maps, so give them different names");
      out.maps.push_back(m);
    }
  }
  detail::place_arrays_by_first_use(out, std::move(arrays));
  out.check();
  return out;
}

/// One piece of a training step, its three programs described apart (wp::describe): its
/// forward maps over an input array x (the previous piece's output, by name; the data for the
/// first piece); wp::backward of them seeded by the gradient of its output y --
/// `wp::seed(y, dy)`, any dy -- with `wp::wrt(x, dx)` where dx is called "d" followed by x's
/// name, as wp::backward calls the gradient of an array it makes (the first piece: no wrt of
/// its data), or by the loss for the last piece; its parameters' updates (empty where it has
/// none).
struct step_piece {
  program_description forward, backward, update{};
};

/// The training step of `pieces` in a row, as the typed step of the whole network would have
/// it: the forward maps piece by piece, the backward maps last piece first, the updates piece
/// by piece (wp::join_descriptions). Each piece's backward but the last's begins with the copy
/// `seed.d<y>` of its seed dy into y's gradient "d<y>"; that copy and dy are dropped, the next
/// piece's backward writing d<y> itself (its gradient of x, called alike). A shape_error where
/// a piece's backward has no such copy or the next piece's does not write d<y>. The backward
/// parts' maps that access nothing (wp::backward's pruned zeroing maps, numbered per backward
/// call, so that two pieces may name theirs alike) are left out: they run nowhere and cost
/// nothing.
inline program_description join_pieces(const std::vector<step_piece>& pieces) {
  auto fail = [](const std::string& s) { throw shape_error("wp::join_pieces: " + s); };
  if (pieces.empty()) fail("give at least one piece");
  std::vector<program_description> parts;
  for (const auto& p : pieces) parts.push_back(p.forward);
  for (std::size_t k = pieces.size(); k-- > 0;) {
    program_description b = pieces[k].backward;
    std::erase_if(b.maps, [](const map_description& m) { return m.accesses.empty(); });
    if (k + 1 < pieces.size()) {
      // the copy: "seed.<g>", reading the seed, writing g; the next piece writes g
      const auto seed = std::find_if(b.maps.begin(), b.maps.end(), [](const map_description& m) {
        return m.name.rfind("seed.", 0) == 0;
      });
      if (seed == b.maps.end() || seed->accesses.size() != 2 ||
          seed->accesses[0].mode != access_mode::read ||
          seed->accesses[1].mode != access_mode::assign)
        fail("piece " + std::to_string(k) +
             "'s backward does not begin with wp::seed's copy 'seed.d<y>' of its output's "
             "gradient; differentiate every piece but the last from wp::seed(y, dy)");
      const std::string g = seed->accesses[1].array, dy = seed->accesses[0].array;
      bool written = false;
      for (const auto& m : pieces[k + 1].backward.maps)
        for (const auto& a : m.accesses)
          written = written || (a.array == g && a.mode != access_mode::read);
      if (!written)
        fail("piece " + std::to_string(k + 1) + "'s backward does not write '" + g +
             "', the gradient piece " + std::to_string(k) +
             "'s backward starts from; give it wp::wrt(x, dx) with x its input and dx called '" +
             g + "'");
      b.maps.erase(seed);
      for (const auto& m : b.maps)
        for (const auto& a : m.accesses)
          if (a.array == dy)
            fail("piece " + std::to_string(k) + "'s backward reads its seed '" + dy +
                 "' past the copy into '" + g + "'");
      std::erase_if(b.arrays, [&](const array_description& a) { return a.name == dy; });
    }
    parts.push_back(std::move(b));
  }
  for (const auto& p : pieces) parts.push_back(p.update);
  return join_descriptions(parts);
}

}  // namespace workpart
