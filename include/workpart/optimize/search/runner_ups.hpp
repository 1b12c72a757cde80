#pragma once
/// \file runner_ups.hpp
/// The PaSE search's runner-up pass: min-marginals over the elimination tree (a top-down pass
/// over the tables the elimination kept), exact up to rounding.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine.hpp"

namespace workpart::detail::pase {

/// Min-marginals: best[v][k] = the least total cost with v in configuration k. A top-down
/// pass: outside[v] (a table over D(v)) is the least cost of everything not below v in the
/// elimination tree; v's sums plus it, minimised, give best[v] and its children's outside.
template <class Arg, class G, class Progress>
constexpr bool engine<Arg, G, Progress>::min_marginals(std::vector<std::vector<double>>& best) {
  phase_ = search_phase::runner_ups;
  work_done_ = 0;
  done_ = 0;
  best.assign(n_, {});
  std::vector<std::vector<double>> outside(n_);
  for (std::size_t t = n_; t-- > 0;) {
    const std::size_t v = order_[t];
    const std::size_t Kv = K_[v], m = D_[v].size();
    const auto& kids = children_[v];
    std::vector<std::size_t> kid_strides(kids.size() * (m ? m : 1), 0);
    for (std::size_t c = 0; c < kids.size(); ++c) {
      outside[kids[c]].assign(rows_[kids[c]], inf);
      child_strides(v, kids[c], kid_strides.data() + c * m);
    }
    const bucket b = make_bucket(v);
    std::vector<double> mm(Kv, inf);
    bool ok = true;
    if (m == 0) {  // a root: its children's tables are over v alone
      mm = b.unary;
      for (std::size_t c : kids) outside[c] = mm;
      work_done_ += double(Kv);
    } else {
      const double* out_v = outside[v].data();
      const auto& ms = ms_[v];
      std::vector<std::size_t> sv(kids.size());
      for (std::size_t c = 0; c < kids.size(); ++c) sv[c] = ms_[kids[c]][0];
      std::vector<double> ov(K_[D_[v][0]]);
      bool need_x = false;
      for (std::size_t c = 0; c < kids.size(); ++c) need_x |= kid_strides[c * m] != 0;
      std::vector<double> X(need_x ? Kv * K_[D_[v][0]] : 0), lo(Kv);
      ok = sweep(v, b,
                 [&](std::size_t, const std::size_t* a, const double* b1, const double* C,
                     const double* C2, std::size_t J) {
                   std::size_t base = 0;
                   for (std::size_t i = 1; i < m; ++i) base += a[i] * ms[i];
                   for (std::size_t j = 0; j < J; ++j) ov[j] = out_v[base + j * ms[0]];
                   block_rows(b1, C, C2, ov.data(), Kv, J, need_x ? X.data() : nullptr, lo.data());
                   for (std::size_t k = 0; k < Kv; ++k) mm[k] = std::min(mm[k], lo[k]);
                   for (std::size_t c = 0; c < kids.size(); ++c) {
                     const std::size_t* st = kid_strides.data() + c * m;
                     std::size_t off = 0;
                     for (std::size_t i = 1; i < m; ++i) off += a[i] * st[i];
                     double* dst = outside[kids[c]].data() + off;
                     if (st[0] == 0) {  // d0 not in the child's table: the minimum over the block
                       for (std::size_t k = 0; k < Kv; ++k)
                         dst[k * sv[c]] = std::min(dst[k * sv[c]], lo[k]);
                     } else {  // swapped: [k][a0], contiguous over a0
                       for (std::size_t k = 0; k < Kv; ++k) {
                         double* d = dst + k * sv[c];
                         const double* xk = X.data() + k * J;
                         for (std::size_t j = 0; j < J; ++j) d[j] = d[j] < xk[j] ? d[j] : xk[j];
                       }
                     }
                   }
                 });
    }
    if (!ok) return false;
    for (std::size_t c : kids) {  // remove the child's own table: it is below the child
      auto& oc = outside[c];
      const auto& mc = msg_[c];
      for (std::size_t i = 0; i < oc.size(); ++i) oc[i] = mc[i] == inf ? inf : oc[i] - mc[i];
    }
    outside[v] = {};
    msg_[v] = {};  // its parent is done with it
    best[v] = std::move(mm);
    ++done_;
    if (!tick(work_done_)) return done_ == n_;
  }
  return true;
}

}  // namespace workpart::detail::pase
