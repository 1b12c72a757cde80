#pragma once
/// \file differentiable.hpp
/// What wp::backward checks and prunes before it differentiates (backward.hpp): each forward
/// statement's writes and reads, the refusal of a program whose derivatives would read values
/// it overwrites, the arrays whose gradients the named parameters need, and the pruning of a
/// backward map's statements that write no needed gradient.

#include <algorithm>
#include <array>
#include <bit>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "../core/array.hpp"
#include "../core/flat_tuple.hpp"
#include "../core/index.hpp"
#include "../core/space.hpp"
#include "../error.hpp"
#include "../expr/access_list.hpp"
#include "../expr/interval.hpp"
#include "../expr/map.hpp"
#include "gradient_table.hpp"
#include "padded_gradient.hpp"
#include "swap_dims.hpp"
#include "rules.hpp"

namespace workpart::detail {

/// What one forward statement writes and reads (by array address), for the checks.
struct statement_record {
  std::string map;
  const void* written = nullptr;
  std::string written_name;
  bool assigns = false;
  bool extremum = false;  ///< max_into / min_into: its gradient reads the final values written
  std::vector<std::pair<const void*, std::string>> reads;
  /// [axis]: the half-open range of the written array the statement writes over its map's
  /// space (the whole axis where the subscript is not affine)
  std::vector<std::pair<index_t, index_t>> box;
};

/// The part of an array the write access `e` covers over the space [lo, hi).
inline std::vector<std::pair<index_t, index_t>> write_box(const access_event& e, const index_t* lo,
                                                          const index_t* hi) {
  std::vector<std::pair<index_t, index_t>> box;
  for (int ax = 0; ax < e.rank; ++ax) {
    const axis_form& f = e.forms[std::size_t(ax)];
    std::optional<interval> iv;
    if (f.kind == axis_kind::affine) iv = form_interval(to_linear(f), {}, lo, hi);
    if (iv)
      box.emplace_back(index_t(iv->lo), index_t(iv->empty() ? iv->lo : iv->hi + 1));
    else
      box.emplace_back(0, e.extent[std::size_t(ax)]);
  }
  return box;
}

/// Whether two write boxes share an element.
inline bool boxes_overlap(const std::vector<std::pair<index_t, index_t>>& a,
                          const std::vector<std::pair<index_t, index_t>>& b) {
  for (std::size_t d = 0; d < a.size() && d < b.size(); ++d)
    if (std::max(a[d].first, b[d].first) >= std::min(a[d].second, b[d].second)) return false;
  return true;
}

/// The records of one map's statements, appended to `out`, from its access events
/// (expr/access_list.hpp: the walk the map's own checks make; per statement its left side,
/// then its right side) over its space [lo, hi).
inline void append_statement_records(std::vector<statement_record>& out,
                                     const std::string& map_name, int rank,
                                     const std::vector<index_t>& space_lo,
                                     const std::vector<index_t>& space_hi,
                                     const std::vector<access_event>& events) {
  int current = -1;
  index_t lo[max_dims] = {}, hi[max_dims] = {};
  for (int d = 0; d < rank; ++d) {
    lo[d] = space_lo[std::size_t(d)];
    hi[d] = space_hi[std::size_t(d)];
  }
  for (const access_event& e : events) {
    if (e.what != access_event::kind::access) continue;
    if (e.write && e.statement != current) {
      current = e.statement;
      statement_record r;
      r.map = map_name;
      r.written = e.arr;
      r.written_name = e.name;
      r.assigns = e.statement_kind == combine::assign;
      r.extremum = e.statement_kind == combine::max || e.statement_kind == combine::min;
      r.box = write_box(e, lo, hi);
      out.push_back(std::move(r));
    } else if (!e.write) {
      out.back().reads.emplace_back(e.arr, e.name);
    }
  }
}

/// The backward pass recomputes derivatives from the arrays the forward statements read, so
/// none of them may change after it is read (no in-place update, no map reading its own
/// output), and an array's '=' must be the first write of what it writes (a later '=' would
/// hide the values written before it from the gradient; '='s of disjoint parts, as
/// wp::nn::concat's, are each a first write). Both are refused here, on every rank alike.
inline void check_differentiable(const std::vector<statement_record>& recs) {
  for (std::size_t s = 0; s < recs.size(); ++s) {
    for (const auto& [arr, name] : recs[s].reads)
      for (std::size_t t = s; t < recs.size(); ++t)
        if (recs[t].written == arr)
          throw plan_error(
              "wp::backward: map '" + recs[t].map + "' writes '" + name + "', which " +
              (t == s ? std::string("the same statement reads")
                      : "map '" + recs[s].map + "' reads before it") +
              "; the backward pass needs the values that were read, so in-place updates and "
              "maps that read their own output are not differentiable: write the new values "
              "to another array");
    if (recs[s].extremum) {
      for (std::size_t t = s + 1; t < recs.size(); ++t)
        if (recs[t].written == recs[s].written)
          throw plan_error("wp::backward: map '" + recs[t].map + "' writes '" +
                           recs[s].written_name + "' after the max_into/min_into of map '" +
                           recs[s].map +
                           "'; the gradient of a max_into/min_into needs its final values "
                           "(reduce into the array once, in its last write)");
      for (std::size_t u = 0; u < s; ++u)
        if (recs[u].written == recs[s].written && !recs[u].reads.empty())
          throw plan_error("wp::backward: map '" + recs[s].map +
                           "' takes the max_into/min_into of '" + recs[s].written_name +
                           "' over values map '" + recs[u].map +
                           "' wrote from arrays; start it from a constant (e.g. -infinity) and "
                           "reduce every value in the max_into/min_into");
    }
    if (recs[s].assigns)
      for (std::size_t u = 0; u < s; ++u)
        if (recs[u].written == recs[s].written && boxes_overlap(recs[u].box, recs[s].box))
          throw plan_error("wp::backward: map '" + recs[s].map + "' assigns '" +
                           recs[s].written_name + "' with '=' after map '" + recs[u].map +
                           "' wrote it; an array's '=' must be its first write (write the "
                           "later values to another array)");
  }
}

inline bool program_touches(const std::vector<statement_record>& recs, const void* a) {
  for (const auto& r : recs) {
    if (r.written == a) return true;
    for (const auto& rd : r.reads)
      if (rd.first == a) return true;
  }
  return false;
}
inline bool program_writes(const std::vector<statement_record>& recs, const void* a) {
  for (const auto& r : recs)
    if (r.written == a) return true;
  return false;
}

/// One `wp::wrt(param, grad)` of a wp::backward, by address and name, for the checks below.
struct gradient_request {
  const void* param = nullptr;
  std::string param_name;
  void* grad = nullptr;
  std::string grad_name;
  bool accumulate = false;
};
/// What a wp::backward differentiates from: the loss (or the output y of wp::seed(y, dy),
/// and its given gradient dy).
struct seed_request {
  const void* seeded = nullptr;
  std::string seeded_name;
  bool is_loss = true;
  const void* dy = nullptr;  ///< wp::seed's dy; nullptr for a loss
  std::string dy_name;
};

/// The first map that writes `a`, else the first that reads it, as "map 'm' writes 'a'"
/// (empty where the program does not use a).
inline std::string first_use_text(const std::vector<statement_record>& recs, const void* a,
                                  const std::string& name) {
  for (const auto& r : recs)
    if (r.written == a) return "map '" + r.map + "' writes '" + name + "'";
  for (const auto& r : recs)
    for (const auto& rd : r.reads)
      if (rd.first == a) return "map '" + r.map + "' reads '" + name + "'";
  return {};
}

/// A gradient array must be an array of its own: the backward program writes it while it
/// still reads the forward values, the seed and the other gradients. Refused here, on every
/// rank alike (the program and the wrt list are the same on every rank), each with a
/// sentence naming both roles of the array:
///   - the parameter itself, the loss, wp::seed's output or its given gradient dy;
///   - another wrt's parameter, or another wrt's gradient (their sums would mix);
///   - any array the forward program reads or writes (an input, an intermediate);
///   - wp::accumulate of an array the forward program writes (an intermediate or the loss):
///     the backward pass reads that gradient to differentiate what the array was computed
///     from, so an accumulated one would carry earlier executions into every gradient.
inline void check_gradient_arrays(const std::vector<statement_record>& recs,
                                  const std::vector<gradient_request>& reqs,
                                  const seed_request& seed) {
  const std::string from = seed.is_loss ? "the loss '" + seed.seeded_name + "'"
                                        : "the output '" + seed.seeded_name + "' of wp::seed('" +
                                              seed.seeded_name + "', '" + seed.dy_name + "')";
  for (std::size_t x = 0; x < reqs.size(); ++x) {
    const gradient_request& w = reqs[x];
    const std::string call = "wp::wrt('" + w.param_name + "', '" + w.grad_name + "')";
    auto refuse = [&](const std::string& what, const std::string& why) {
      throw plan_error("wp::backward: " + call + " names " + what + " as the gradient of '" +
                       w.param_name + "'; " + why + ": give '" + w.param_name +
                       "' a gradient array of its own, of its shape, that the forward program "
                       "does not use");
    };
    if (w.grad == w.param)
      throw plan_error("wp::backward: wp::wrt('" + w.param_name +
                       "', ...) names the parameter itself as its gradient");
    if (w.grad == seed.seeded)
      refuse(from, "the backward program starts from its gradient and reads its value");
    if (seed.dy && w.grad == seed.dy)
      refuse("'" + seed.dy_name + "', the dL/d" + seed.seeded_name + " that wp::seed('" +
                 seed.seeded_name + "', '" + seed.dy_name + "') gives,",
             "the backward program reads it as its seed, and would overwrite it");
    for (std::size_t y = 0; y < reqs.size(); ++y) {
      if (y == x) continue;
      const gradient_request& v = reqs[y];
      if (w.grad == v.param)
        refuse("'" + v.param_name + "', the parameter of wp::wrt('" + v.param_name + "', '" +
                   v.grad_name + "'),",
               "the backward program reads the parameters' values while it writes the gradients");
      if (y < x && w.grad == v.grad)
        throw plan_error("wp::backward: wp::wrt('" + v.param_name + "', '" + v.grad_name +
                         "') and " + call + " name one array '" + w.grad_name +
                         "' as the gradient of two parameters, which would hold their sum (or "
                         "the last one written); give each parameter a gradient array of its "
                         "own (to add two gradients, add the two arrays in a map after the "
                         "backward program)");
    }
    if (const std::string use = first_use_text(recs, w.grad, w.grad_name); !use.empty())
      refuse("'" + w.grad_name + "', an array of the forward program (" + use + "),",
             "the backward program reads the forward program's arrays while it writes the "
             "gradients, and the next execution would read the gradient in its place");
    if (w.accumulate && (w.param == seed.seeded || program_writes(recs, w.param)))
      throw plan_error(
          "wp::backward: wp::accumulate(" + call + "): " +
          (w.param == seed.seeded ? from + " is what the backward program differentiates from"
                                  : first_use_text(recs, w.param, w.param_name)) +
          ", so the backward pass reads '" + w.grad_name + "' to differentiate what '" +
          w.param_name +
          "' is computed from; accumulated, it would carry the earlier executions' gradient "
          "into every gradient before it. Accumulate the gradients of arrays the program only "
          "reads (its parameters); for a running sum of this one, add '" +
          w.grad_name + "' into another array in a map after the backward program");
  }
}

/// The arrays whose gradients the named ones need: the parameters and every array written
/// from them. One pass in program order finds them all, since no array is written after it
/// is read (check_differentiable).
inline std::vector<const void*> arrays_needing_gradients(const std::vector<statement_record>& recs,
                                                         std::vector<const void*> params) {
  auto needed = [&](const void* a) {
    return std::find(params.begin(), params.end(), a) != params.end();
  };
  for (const statement_record& r : recs)
    if (!needed(r.written))
      for (const auto& rd : r.reads)
        if (needed(rd.first)) {
          params.push_back(r.written);
          break;
        }
  return params;
}

/// Prunes the statements of a backward map that write a buffer no named gradient needs (the
/// gradient of a program input such as the data, its zeroing, ...).
template <int N, class... S>
void prune_unneeded(map_t<N, S...>& m, const gradient_table& grads,
                    const std::vector<const void*>& needed) {
  auto is_needed = [&](const void* grad) {
    return std::find(needed.begin(), needed.end(), grads.origin_of(grad)) != needed.end();
  };
  std::size_t s = 0;
  std::apply(
      [&](const auto&... st) {
        ((is_needed(st.lhs.arr) ? void() : m.prune_statement(s), ++s), ...);
      },
      m.statements());
}

}  // namespace workpart::detail
