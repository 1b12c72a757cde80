/// \file test_networks.cpp
/// The networks of examples/networks/, scaled down, trained at 1 to 4 ranks under three
/// strategies -- data parallelism, the experts' split and the one wp::automatic finds -- give
/// the parameters and the loss of one process after two SGD steps (double, 1e-9 relative).
/// One process is the same step with every map's grid all ones: every map on rank 0. The
/// layers themselves are checked against plain loops in unit.nn and mpi.nn.

#include "mpi_test_support.hpp"

#include "../../examples/networks/alexnet.hpp"

#include <cmath>
#include <cstdint>
#include <tuple>
#include <vector>

using namespace mpitest;

namespace {

constexpr int steps = 2;

/// Every map's grid all ones: the whole step on rank 0.
template <class Program>
wp::schedule one_process(const Program& prog) {
  wp::schedule s;
  prog.for_each_map([&](const auto& m) {
    s.set(m.name(), wp::grid_shape(std::vector<index_t>(std::size_t(m.rank), 1)));
  });
  return s;
}

/// Trains `steps` steps of `step` under `plan` from the same start and returns, on root, every
/// parameter's values and then the loss (empty elsewhere).
template <class Step, class Plan, class Inputs>
std::vector<std::vector<double>> train(const boost::mpi::communicator& comm, Step& step,
                                       Plan&& plan, Inputs&& init_inputs) {
  init_inputs();
  std::apply([](auto&... w) { (w.param->init(w.param->get_generator()), ...); }, step.params);
  plan.scatter();
  for (int s = 0; s < steps; ++s) plan.execute();
  std::vector<std::vector<double>> got;
  auto keep = [&](auto& a) {
    plan.gather(a);
    if (comm.rank() == 0) got.emplace_back(a.data(), a.data() + a.size());
  };
  std::apply([&](auto&... w) { (keep(*w.param), ...); }, step.params);
  keep(*step.loss);
  return got;
}

/// Root's verdict, on every rank: `got` equals `want` array by array within tol (relative).
std::string differ(const boost::mpi::communicator& comm,
                   const std::vector<std::vector<double>>& got,
                   const std::vector<std::vector<double>>& want, double tol) {
  std::string msg;
  if (comm.rank() == 0) {
    if (got.size() != want.size()) msg = "different numbers of arrays";
    for (std::size_t a = 0; a < want.size() && msg.empty(); ++a)
      for (std::size_t e = 0; e < want[a].size(); ++e) {
        const double err = std::abs(got[a][e] - want[a][e]) / std::max(1.0, std::abs(want[a][e]));
        if (!(err <= tol)) {
          msg = "array " + std::to_string(a) + " [" + std::to_string(e) +
                "] = " + std::to_string(got[a][e]) + ", one process " + std::to_string(want[a][e]);
          break;
        }
      }
  }
  return from_root(comm, msg);
}

}  // namespace

TEST_CASE("AlexNet, scaled down, trains as on one process under three strategies",
          "[networks][alexnet]") {
  wp::context ctx(g_argc, g_argv);
  const int P = ctx.size();
  // batch 5 (uneven over 2, 3, 4), 67 x 67 images (1 x 1 after pool3), channels / 16
  wpnet::alexnet<double> net({.batch = 5, .image = 67, .width = 16, .classes = 1024});
  auto step = net.step(0.05);
  auto inputs = [&] {
    net.x.init([](const std::array<index_t, 4>& g) {
      return std::sin(0.013 * double(((g[0] * 3 + g[1]) * 67 + g[2]) * 67 + g[3]) + 0.2);
    });
    net.label.init(
        [](const std::array<index_t, 1>& g) { return std::int32_t((g[0] * 7 + 3) % 64); });
  };
  const auto want =
      train(ctx.comm(), step, wp::distribute(step.program, one_process(step.program), ctx), inputs);
  // the steps did something: a finite loss, and the last bias moved from its initial values
  std::string moved;
  if (ctx.comm().rank() == 0) {
    const double loss = want.back().front();
    if (!std::isfinite(loss) || loss <= 0) moved = "one process's loss is " + std::to_string(loss);
    auto& b = *std::get<std::tuple_size_v<decltype(step.params)> - 1>(step.params).param;
    double most = 0;
    for (index_t e = 0; e < b.size(); ++e)
      most = std::max(
          most, std::abs(want[want.size() - 2][std::size_t(e)] - double(b.get_generator()({e}))));
    if (most < 1e-6) moved += " the last bias did not move";
  }
  REQUIRE(from_root(ctx.comm(), moved) == "");
  SECTION("data parallelism") {
    auto got =
        train(ctx.comm(), step,
              wp::distribute(step.program, wpnet::data_parallel(step.program, P), ctx), inputs);
    REQUIRE(differ(ctx.comm(), got, want, 1e-9) == "");
  }
  SECTION("the experts' split: data-parallel convolutions, model-parallel classifier") {
    auto got =
        train(ctx.comm(), step,
              wp::distribute(step.program, wpnet::alexnet_expert(step.program, P), ctx), inputs);
    REQUIRE(differ(ctx.comm(), got, want, 1e-9) == "");
  }
  SECTION("wp::automatic") {
    auto got = train(ctx.comm(), step, wp::distribute(step.program, wp::automatic, ctx), inputs);
    REQUIRE(differ(ctx.comm(), got, want, 1e-9) == "");
  }
}
