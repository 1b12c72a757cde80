#pragma once
/// \file network_training.hpp
/// What the whole-network tests share: train a step under a plan from the same start and
/// compare every parameter and the loss with one process's, on root, reported on every rank.

#include "mpi_test_support.hpp"

#include "../../examples/networks/network.hpp"

#include <workpart/optimize.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace mpitest {

constexpr int steps = 2;

/// Every map's grid all ones: the whole step on rank 0.
template <class Program>
wp::schedule one_process(const Program& prog) {
  wp::schedule s;
  prog.for_each_map([&](const auto& m) {
    s.set(m.name(), wp::grid_shape(std::vector<index_t>(std::size_t(m.rank()), 1)));
  });
  return s;
}

/// Trains `steps` steps of `step` under `plan` from the same start and returns, on root, every
/// parameter's values and then the loss (empty elsewhere).
template <class Step, class Plan, class Inputs>
std::vector<std::vector<double>> train(const boost::mpi::communicator& comm, Step& step,
                                       Plan&& plan, Inputs&& init_inputs) {
  init_inputs();
  wpnet::for_each_parameter(step.params,
                            [](const auto& w) { w.param->init(w.param->get_generator()); });
  plan.scatter();
  for (int s = 0; s < steps; ++s) plan.execute();
  std::vector<std::vector<double>> got;
  auto keep = [&](auto& a) {
    plan.gather(a);
    if (comm.rank() == 0) got.emplace_back(a.data(), a.data() + a.size());
  };
  wpnet::for_each_parameter(step.params, [&](const auto& w) { keep(*w.param); });
  keep(*step.loss);
  return got;
}

/// Root's verdict, on every rank: `got` equals `want` array by array within tol (relative);
/// else where they differ most.
inline std::string differ(const boost::mpi::communicator& comm,
                          const std::vector<std::vector<double>>& got,
                          const std::vector<std::vector<double>>& want, double tol) {
  std::string msg;
  if (comm.rank() == 0) {
    if (got.size() != want.size()) msg = "different numbers of arrays";
    // the largest difference, relative to max(1, |want|) (a NaN counts as the largest)
    double worst = 0;
    std::size_t wa = 0, we = 0;
    for (std::size_t a = 0; a < want.size() && msg.empty(); ++a) {
      if (got[a].size() != want[a].size()) msg = "array " + std::to_string(a) + ": another size";
      for (std::size_t e = 0; e < want[a].size() && msg.empty(); ++e) {
        const double err = std::abs(got[a][e] - want[a][e]) / std::max(1.0, std::abs(want[a][e]));
        if (!(err <= worst)) {
          worst = std::isnan(err) ? INFINITY : err;
          wa = a;
          we = e;
        }
      }
    }
    if (msg.empty() && !(worst <= tol)) {
      std::ostringstream o;
      o.precision(17);
      o << "array " << wa << " [" << we << "] = " << got[wa][we] << ", one process " << want[wa][we]
        << " (the largest relative difference, " << worst << ")";
      msg = o.str();
    }
  }
  return from_root(comm, msg);
}

/// Trains `step` on one process, then under each of `strategies` and wp::automatic, from the
/// same start, and checks each against one process (`tol` relative). One test case, not
/// sections: one process's steps are trained once, not once per strategy.
template <class Step, class Inputs>
void train_like_one_process(wp::context& ctx, Step& step, Inputs&& inputs,
                            const std::vector<std::pair<std::string, wp::schedule>>& strategies,
                            double tol = 1e-9);

/// Root's verdict, on every rank, that one process's two steps did something: a finite,
/// positive loss (the last array of `want`), and the last parameter moved from its start.
template <class Params>
std::string trained(const boost::mpi::communicator& comm,
                    const std::vector<std::vector<double>>& want, const Params& params) {
  std::string msg;
  if (comm.rank() == 0) {
    const double loss = want.back().front();
    if (!std::isfinite(loss) || loss <= 0) msg = "one process's loss is " + std::to_string(loss);
    std::size_t count = 0, k = 0;
    wpnet::for_each_parameter(params, [&](const auto&) { ++count; });
    double most = 0;
    wpnet::for_each_parameter(params, [&](const auto& p) {
      if (++k != count) return;  // the last parameter, the last array but the loss in `want`
      const auto& w = *p.param;
      const auto st = w.strides();
      for (index_t e = 0; e < w.size(); ++e) {  // element e's coordinates, row-major
        auto g = w.shape();
        for (std::size_t a = 0, r = std::size_t(e); a < g.size(); ++a) {
          g[a] = index_t(r) / st[a];
          r -= std::size_t(g[a] * st[a]);
        }
        most = std::max(
            most, std::abs(want[want.size() - 2][std::size_t(e)] - double(w.get_generator()(g))));
      }
    });
    if (most < 1e-6) msg += " the last parameter did not move";
  }
  return from_root(comm, msg);
}

template <class Step, class Inputs>
void train_like_one_process(wp::context& ctx, Step& step, Inputs&& inputs,
                            const std::vector<std::pair<std::string, wp::schedule>>& strategies,
                            double tol) {
  const auto want =
      train(ctx.comm(), step, wp::distribute(step.program, one_process(step.program), ctx), inputs);
  REQUIRE(trained(ctx.comm(), want, step.params) == "");
  for (const auto& [what, s] : strategies) {
    INFO(what);
    auto got = train(ctx.comm(), step, wp::distribute(step.program, s, ctx), inputs);
    CHECK(differ(ctx.comm(), got, want, tol) == "");
  }
  INFO("wp::automatic");
  auto got = train(ctx.comm(), step, wp::distribute(step.program, wp::automatic, ctx), inputs);
  CHECK(differ(ctx.comm(), got, want, tol) == "");
}

/// PaSE's space, as bench_networks searches it: each backward map on its forward map's grid.
inline wp::optimize_options pase_space() {
  wp::optimize_options o;
  o.configs.tie_backward = true;
  return o;
}

/// The optimum wp::optimize finds for `prog` at P = 2, 3, 4 and 8 ranks, over `opt`'s grids
/// with every map's replicated candidate too (config_options::replicas: data parallelism's
/// updates, Megatron's norms), costs no more than data parallelism (wpnet::data_parallel) or
/// the experts' strategy (`expert(prog, P)`) priced by the same model and options, and costs
/// what its schedule is priced at. A check of the model: priced on one process, so done where
/// the test runs on one rank.
template <class Program, class Expert>
void found_within_baselines(wp::context& ctx, const Program& prog, wp::optimize_options opt,
                            const std::string& expert_name, Expert expert) {
  if (ctx.size() != 1) return;
  opt.configs.replicas = true;
  opt.search.runner_ups = false;
  const wp::machine_model mm{1e13, 1e-5, 1.0 / 16e9};  // PaSE's: 10 TFLOP/s, 16 GB/s links
  for (int P : {2, 3, 4, 8}) {
    INFO("P = " << P);
    const wp::optimized r = wp::optimize(prog, P, mm, opt);
    CHECK(r.proven_optimal);
    CHECK(wp::modelled_cost(prog, r.schedule, P, mm, opt.configs) == Approx(r.cost).epsilon(1e-12));
    const std::pair<std::string, wp::schedule> baselines[] = {
        {"data parallelism", wpnet::data_parallel(prog, P)}, {expert_name, expert(prog, P)}};
    for (const auto& [what, s] : baselines) {
      INFO(what);
      CHECK(r.cost <= wp::modelled_cost(prog, s, P, mm, opt.configs) * (1 + 1e-12));
    }
  }
}

}  // namespace mpitest
