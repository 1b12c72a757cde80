#pragma once
/// \file elimination.hpp
/// Phases 2 and 3 of the PaSE search: each vertex's table over its dependent set, built in
/// blocks of min-plus products (../min_plus.hpp), then the configurations read back from the
/// tables in reverse order.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "engine.hpp"

namespace workpart::detail::pase {

/// What v's sweep adds: its vertex cost, its edges, its children's tables.
template <class Arg, class G, class Progress>
constexpr bucket engine<Arg, G, Progress>::make_bucket(std::size_t v) const {
  const std::size_t m = D_[v].size(), Kv = K_[v];
  bucket b;
  b.unary.assign(unary0_[v].begin(), unary0_[v].end());
  // Per digit i, the tables over v and D(v)[i] alone: edges and children's tables. One
  // edge whose matrix already has the layout ([k][a0] for digit 0: v its source; else
  // [a_i][k]: v its target) is used in place; anything else is summed into a copy.
  std::vector<std::size_t> parts(m, 0), direct(m, npos), copy_at(m, npos);
  for (std::size_t e : owned_edges_[v]) {
    const std::size_t i = digit_of(v, src_[e] == v ? dst_[e] : src_[e]);
    ++parts[i];
    direct[i] = e;
  }
  for (std::size_t c : children_[v]) {
    if (D_[c].size() == 1) {
      for (std::size_t k = 0; k < Kv; ++k) b.unary[k] += msg_[c][k];
    } else if (D_[c].size() == 2) {
      ++parts[digit_of(v, D_[c][1])];
    }
  }
  for (std::size_t i = 0; i < m; ++i) {
    const bool in_place = has_spans && parts[i] == 1 && direct[i] != npos &&
                          (i == 0 ? src_[direct[i]] == v : dst_[direct[i]] == v);
    if (!in_place) direct[i] = npos;
    if (parts[i] > 0 && !in_place) {
      copy_at[i] = b.owned.size();
      b.owned.emplace_back(Kv * K_[D_[v][i]], 0.0);
    }
  }
  for (std::size_t e : owned_edges_[v]) {
    const bool v_src = src_[e] == v;
    const std::size_t d = v_src ? dst_[e] : src_[e], i = digit_of(v, d);
    if (copy_at[i] == npos) continue;
    auto& o = b.owned[copy_at[i]];
    const std::size_t Kd = K_[d], Ks = v_src ? Kv : Kd, Kt = v_src ? Kd : Kv;
    for (std::size_t ks = 0; ks < Ks; ++ks)
      for (std::size_t kt = 0; kt < Kt; ++kt) {
        const std::size_t kv = v_src ? ks : kt, kd = v_src ? kt : ks;
        o[i == 0 ? kv * Kd + kd : kd * Kv + kv] += edge(e, ks, kt);
      }
  }
  for (std::size_t c : children_[v]) {
    if (D_[c].size() != 2) continue;
    auto& o = b.owned[copy_at[digit_of(v, D_[c][1])]];
    const auto& mc = msg_[c];  // digit 0: [k][a0] (swapped), else [a_i][k]: as the copy
    for (std::size_t x = 0; x < o.size(); ++x) o[x] += mc[x];
  }
  struct entry {
    std::size_t level;
    const double* data;
    std::size_t child;  // npos: a pair factor on digit `level`
    std::size_t seq;    // keeps the sort stable (std::stable_sort is not constexpr)
  };
  std::vector<entry> es, e0;
  for (std::size_t i = 0; i < m; ++i) {
    const double* data = copy_at[i] != npos  ? b.owned[copy_at[i]].data()
                         : direct[i] != npos ? span_data(direct[i])
                                             : nullptr;
    if (!data) continue;
    if (i == 0)
      b.pair0 = data;
    else
      es.push_back({i, data, npos, es.size()});
  }
  for (std::size_t c : children_[v])
    if (D_[c].size() >= 3) {
      const std::size_t level = digit_of(v, D_[c][1]);
      (level == 0 ? e0 : es).push_back({level, msg_[c].data(), c, es.size() + e0.size()});
    }
  std::sort(es.begin(), es.end(), [](const entry& x, const entry& y) {
    return x.level != y.level ? x.level < y.level : x.seq < y.seq;
  });
  b.strides.assign((es.size() + e0.size()) * m, 0);
  std::size_t f = 0;
  for (auto* list : {&es, &e0})
    for (const entry& en : *list) {
      std::size_t* st = b.strides.data() + f * m;
      if (en.child == npos)
        st[en.level] = Kv;
      else
        child_strides(v, en.child, st);
      (list == &es ? b.factors : b.level0).push_back(factor{en.data, en.level, f * m});
      ++f;
    }
  b.level_begin.assign(m + 1, 0);
  for (std::size_t L = 0; L <= m; ++L) {
    std::size_t c = 0;
    while (c < es.size() && es[c].level < L) ++c;
    b.level_begin[L] = c;
  }
  return b;
}

/// Calls fn(r0, digits, b1, C, C2, J) for every block of v's table: the J = K_d0 rows
/// r0 .. r0 + J - 1 that share the digits a[1..] of D(v) (a[0] = 0), with b1[k] the sum of
/// the factors without d0 and C[k * J + j] (+ C2[k * J + j], C2 may be null) the sum of
/// those with d0 = j. A factor without d0 is added when a digit it depends on changes
/// (partial sums per level). Needs |D(v)| >= 1.
template <class Arg, class G, class Progress>
template <class Fn>
constexpr bool engine<Arg, G, Progress>::sweep(std::size_t v, const bucket& b, Fn&& fn) {
  const std::size_t m = D_[v].size(), Kv = K_[v], R = rows_[v];
  const std::size_t J = K_[D_[v][0]], blocks = R / J;
  std::vector<double> buf((m + 1) * Kv);
  std::copy(b.unary.begin(), b.unary.end(), buf.begin() + std::ptrdiff_t(m * Kv));
  std::vector<std::size_t> a(m, 0), radix(m);
  for (std::size_t i = 0; i < m; ++i) radix[i] = K_[D_[v][i]];
  auto row_of = [&](const factor& f) {
    const std::size_t* st = b.strides.data() + f.strides;
    std::size_t off = 0;
    for (std::size_t i = 1; i < m; ++i) off += a[i] * st[i];
    return f.data + off;
  };
  auto fill = [&](std::size_t L) {  // buf[L] = buf[L + 1] + factors of level L
    double* dst = buf.data() + L * Kv;
    const double* src = dst + Kv;
    for (std::size_t k = 0; k < Kv; ++k) dst[k] = src[k];
    for (std::size_t f = b.level_begin[L]; f < b.level_begin[L + 1]; ++f) {
      const double* p = row_of(b.factors[f]);
      for (std::size_t k = 0; k < Kv; ++k) dst[k] += p[k];
    }
  };
  for (std::size_t L = m; L-- > 1;) fill(L);
  // The matrices over (k, a0): the edges' (fixed) and the children's (one per block, in
  // place: their layout is swapped for this). Two go to the kernel as they are; more are
  // summed first; none is a zero matrix.
  const std::size_t nmat = (b.pair0 ? 1 : 0) + b.level0.size();
  std::vector<double> cbuf(nmat == 0 || nmat > 2 ? Kv * J : 0, 0.0);
  const double* b1 = buf.data() + Kv;
  const std::size_t chunk = std::max<std::size_t>(1, (std::size_t(1) << 20) / (Kv * J));
  std::size_t next_tick = chunk;
  for (std::size_t blk = 0; blk < blocks; ++blk) {
    const double* C = cbuf.data();
    const double* C2 = nullptr;
    if (nmat == 1) {
      C = b.pair0 ? b.pair0 : row_of(b.level0[0]);
    } else if (nmat == 2) {
      C = b.pair0 ? b.pair0 : row_of(b.level0[0]);
      C2 = row_of(b.level0[b.pair0 ? 0 : 1]);
    } else if (nmat > 2) {
      for (std::size_t x = 0; x < Kv * J; ++x) cbuf[x] = b.pair0 ? b.pair0[x] : 0.0;
      for (const factor& f : b.level0) {
        const double* p = row_of(f);
        for (std::size_t x = 0; x < Kv * J; ++x) cbuf[x] += p[x];
      }
    }
    fn(blk * J, a.data(), b1, C, C2, J);
    std::size_t i = 1;
    while (i < m) {
      if (++a[i] < radix[i]) break;
      a[i] = 0;
      ++i;
    }
    if (i == m) break;
    for (std::size_t L = i; L >= 1; --L) fill(L);
    if (blk + 1 == next_tick) {
      next_tick += chunk;
      if (!tick(work_done_ + double(blk + 1) * double(J) * double(Kv))) return false;
    }
  }
  work_done_ += double(R) * double(Kv);
  return true;
}

/// Processes the vertices in order; false when the budget ran out (done_ were finished).
template <class Arg, class G, class Progress>
constexpr bool engine<Arg, G, Progress>::eliminate() {
  msg_.assign(n_, {});
  arg_.assign(n_, {});
  phase_ = search_phase::eliminate;
  for (std::size_t t = 0; t < n_; ++t) {
    const std::size_t v = order_[t];
    const bucket b = make_bucket(v);
    auto& val = msg_[v];
    auto& arg = arg_[v];
    val = take_table(rows_[v]);
    arg.resize(rows_[v]);
    const std::size_t Kv = K_[v];
    bool ok = true;
    if (D_[v].empty()) {  // one row: the best configuration of v alone
      val[0] = inf;
      arg[0] = 0;
      for (std::size_t k = 0; k < Kv; ++k)
        if (b.unary[k] < val[0]) {
          val[0] = b.unary[k];
          arg[0] = Arg(k);
        }
      work_done_ += double(Kv);
    } else {
      const auto& ms = ms_[v];
      std::vector<double> tmp(ms[0] == 1 ? 0 : K_[D_[v][0]]);
      ok = sweep(v, b,
                 [&](std::size_t r0, const std::size_t* a, const double* b1, const double* C,
                     const double* C2, std::size_t J) {
                   if (ms[0] == 1) {  // the plain layout: the block is rows r0 .. r0 + J - 1
                     block_min(b1, C, C2, Kv, J, val.data() + r0, arg.data() + r0);
                   } else {  // swapped: the block's costs are ms[0] apart
                     block_min(b1, C, C2, Kv, J, tmp.data(), arg.data() + r0);
                     std::size_t base = 0;
                     for (std::size_t i = 1; i < ms.size(); ++i) base += a[i] * ms[i];
                     for (std::size_t j = 0; j < J; ++j) val[base + j * ms[0]] = tmp[j];
                   }
                 });
    }
    if (!ok) {
      val = {};
      arg = {};
      return false;
    }
    if (!opt_.runner_ups)
      for (std::size_t c : children_[v]) give_back(msg_[c]);
    ++done_;
    if (!tick(work_done_)) return done_ == n_;
  }
  return true;
}

/// Configurations of the processed vertices (the first `done_` in order, decoded last to
/// first) given those of the others in `config`.
template <class Arg, class G, class Progress>
constexpr void engine<Arg, G, Progress>::assemble(std::vector<std::size_t>& config) const {
  for (std::size_t t = done_; t-- > 0;) {
    const std::size_t v = order_[t];
    std::size_t r = 0, stride = 1;
    for (std::size_t d : D_[v]) {
      r += config[d] * stride;
      stride *= K_[d];
    }
    config[v] = arg_[v][r];
  }
}

}  // namespace workpart::detail::pase
