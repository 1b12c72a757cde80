#pragma once
/// \file picture.hpp
/// Pictures of a plan's partitions, from the boxes the solver decided (no communication):
/// a terminal block map of one array as a map holds it (each rank's box labelled; halos,
/// replication and partial sums visible where boxes overlap), and an SVG page of a whole plan
/// (every map, every array's boxes per rank, the redistributions between maps with their
/// bytes). The same text on every rank.

#include <string>
#include <vector>

#include "../schedule/box.hpp"
#include "../config.hpp"

namespace workpart::detail {

/// One array as one map holds it: its boxes per rank (read or write boxes).
struct picture_array {
  std::string name;
  std::vector<index_t> shape;
  std::string role;        ///< "read", "written: sum", ...
  std::string collective;  ///< how it gets there, e.g. "Scatterv + Bcast (over g1)"
  std::vector<box> boxes;  ///< [rank]; empty for ranks that hold none
  /// What overlapping boxes mean here: "replicated" (reads), "partial sums" (a split sum).
  std::string overlap = "replicated";
};
/// One map of a plan.
struct picture_map {
  std::string name;
  std::string grid;  ///< e.g. "(2,2,1)"
  std::vector<picture_array> arrays;
};
/// An array moving between maps (or from / to root), with its bytes over all ranks.
struct picture_edge {
  std::string array, from, to, kind;
  index_t bytes = 0;
};

/// The two axes a picture of a rank-R array shows: those along which the boxes are cut into
/// the most pieces (the last two on ties), in axis order; {0, -1} for a 1-D array.
WORKPART_DECL std::pair<int, int> picture_axes(const picture_array& a);

/// A block map of the array in characters: at most `width` x `height` cells, each labelled
/// with the rank whose box holds it (0-9, then a-z), or a capital letter for a set of ranks
/// (listed below the map), '.' for elements no rank holds. Arrays of rank > 2 show the two
/// axes picture_axes picks (boxes projected onto them).
WORKPART_DECL std::string draw_text(const picture_array& a, const std::string& map,
                                    const std::string& grid, int width = 64, int height = 16);

/// A self-contained SVG page of a plan: one panel per map (its arrays' boxes per rank, each
/// rank one colour, overlaps darker, labels r0 r1 ...), and the edges between maps as lines
/// of text with their bytes.
WORKPART_DECL std::string draw_svg(const std::string& title, const std::vector<picture_map>& maps,
                                   const std::vector<picture_edge>& edges, int nranks);

/// Boxes per rank as JSON: [[[lo...],[hi...]] or null per rank].
WORKPART_DECL std::string boxes_json(const std::vector<box>& boxes);

}  // namespace workpart::detail

#if WORKPART_HEADER_ONLY
#include "impl/picture.ipp"
#endif
