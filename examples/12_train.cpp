// Lesson 12: training. A two-layer MLP learns a fixed teacher network's outputs; its backward
// pass is derived by wp::backward from the forward maps, and one training step (forward,
// backward, optimizer update) is one program, distributed with wp::automatic.
//
//   mpirun -np 4 ./12_train [B I H O steps optimizer [fall|-] [profile.svg]]
//       (default 64 16 32 8 50 adam; optimizer: adam, momentum or sgd; with "fall", the
//        loss must also fall tenfold, as it does with the defaults; a file name after it:
//        the profile's timeline written there as SVG)
//
//   h(b,n) += x(b,k) W1(k,n);  a = tanh(h);  y(b,o) += a(b,n) W2(n,o)
//   L = sum (y - t)^2 / (2B)                                            the forward program
//   dW1, dW2 = wp::backward(forward, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2))
//   momentum: v = mu v + dW;  W -= lr v              (sgd: the same with mu = 0)
//   adam:     m = b1 m + (1-b1) dW;  v = b2 v + (1-b2) dW^2;  p1 = b1 p1;  p2 = b2 p2;
//             W -= lr (m / (1 - p1)) / (sqrt(v / (1 - p2)) + eps)
// Root prints the grids the optimizer chose, the loss after every step and the bytes each
// step moves rank to rank, the step's profile (plan.profile(): per map and transfer, measured
// beside the calibrated model's seconds), then checks the loss of every step against the same
// training in plain loops (double).
#include <workpart/workpart.hpp>

#include <boost/mpi/collectives/broadcast.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

namespace wp = workpart;
using wp::index_t;

namespace {

double x_at(index_t b, index_t k) { return std::sin(0.37 * double(b) + 1.3 * double(k)); }
double teacher(index_t u, index_t v, index_t salt) {
  return std::cos(0.7 * double(u) - 1.1 * double(v) + double(salt)) * 0.8;
}
double w_at(index_t u, index_t v, index_t salt, index_t fan_in) {
  return std::sin(1.7 * double(u) + 0.3 * double(v) + double(salt)) / std::sqrt(double(fan_in));
}

struct sizes {
  index_t B, I, H, O;
};
// The teacher: t = tanh(x V1) V2 with fixed V1 (I x I), V2 (I x O).
std::vector<double> targets(const sizes& s) {
  std::vector<double> t(std::size_t(s.B * s.O), 0.0);
  for (index_t b = 0; b < s.B; ++b)
    for (index_t o = 0; o < s.O; ++o) {
      double y = 0;
      for (index_t j = 0; j < s.I; ++j) {
        double z = 0;
        for (index_t k = 0; k < s.I; ++k) z += x_at(b, k) * teacher(k, j, 1);
        y += std::tanh(z) * teacher(j, o, 2);
      }
      t[std::size_t(b * s.O + o)] = y;
    }
  return t;
}

/// The same training in plain loops, in double: the loss of every step.
std::vector<double> train_serially(const sizes& s, int steps, const std::string& opt, double lr) {
  const auto t = targets(s);
  std::vector<double> w1(std::size_t(s.I * s.H)), w2(std::size_t(s.H * s.O));
  for (index_t k = 0; k < s.I; ++k)
    for (index_t n = 0; n < s.H; ++n) w1[std::size_t(k * s.H + n)] = w_at(k, n, 3, s.I);
  for (index_t n = 0; n < s.H; ++n)
    for (index_t o = 0; o < s.O; ++o) w2[std::size_t(n * s.O + o)] = w_at(n, o, 4, s.H);
  std::vector<double> m1(w1.size(), 0.0), v1(w1.size(), 0.0), m2(w2.size(), 0.0),
      v2(w2.size(), 0.0);
  double p1 = 1, p2 = 1;
  std::vector<double> losses;
  for (int step = 0; step < steps; ++step) {
    std::vector<double> a(std::size_t(s.B * s.H)), dy(std::size_t(s.B * s.O));
    std::vector<double> g1(w1.size(), 0.0), g2(w2.size(), 0.0), da(a.size(), 0.0);
    double loss = 0;
    for (index_t b = 0; b < s.B; ++b)
      for (index_t n = 0; n < s.H; ++n) {
        double z = 0;
        for (index_t k = 0; k < s.I; ++k) z += x_at(b, k) * w1[std::size_t(k * s.H + n)];
        a[std::size_t(b * s.H + n)] = std::tanh(z);
      }
    for (index_t b = 0; b < s.B; ++b)
      for (index_t o = 0; o < s.O; ++o) {
        double y = 0;
        for (index_t n = 0; n < s.H; ++n)
          y += a[std::size_t(b * s.H + n)] * w2[std::size_t(n * s.O + o)];
        const double e = y - t[std::size_t(b * s.O + o)];
        loss += e * e / double(2 * s.B);
        dy[std::size_t(b * s.O + o)] = e / double(s.B);
      }
    losses.push_back(loss);
    for (index_t b = 0; b < s.B; ++b)
      for (index_t n = 0; n < s.H; ++n)
        for (index_t o = 0; o < s.O; ++o) {
          g2[std::size_t(n * s.O + o)] +=
              a[std::size_t(b * s.H + n)] * dy[std::size_t(b * s.O + o)];
          da[std::size_t(b * s.H + n)] +=
              dy[std::size_t(b * s.O + o)] * w2[std::size_t(n * s.O + o)];
        }
    for (index_t b = 0; b < s.B; ++b)
      for (index_t n = 0; n < s.H; ++n) {
        const double av = a[std::size_t(b * s.H + n)];
        const double dz = da[std::size_t(b * s.H + n)] * (1 - av * av);
        for (index_t k = 0; k < s.I; ++k) g1[std::size_t(k * s.H + n)] += x_at(b, k) * dz;
      }
    p1 *= 0.9;
    p2 *= 0.999;
    auto update = [&](std::vector<double>& w, const std::vector<double>& g, std::vector<double>& m,
                      std::vector<double>& v) {
      for (std::size_t e = 0; e < w.size(); ++e) {
        if (opt != "adam") {
          m[e] = (opt == "sgd" ? 0.0 : 0.9) * m[e] + g[e];
          w[e] -= lr * m[e];
        } else {
          m[e] = 0.9 * m[e] + 0.1 * g[e];
          v[e] = 0.999 * v[e] + 0.001 * g[e] * g[e];
          w[e] -= lr * (m[e] / (1 - p1)) / (std::sqrt(v[e] / (1 - p2)) + 1e-8);
        }
      }
    };
    update(w1, g1, m1, v1);
    update(w2, g2, m2, v2);
  }
  return losses;
}

}  // namespace

int main(int argc, char** argv) {
  wp::context ctx(argc, argv);
  const bool given = argc > 6;
  const sizes s{given ? std::atoll(argv[1]) : 64, given ? std::atoll(argv[2]) : 16,
                given ? std::atoll(argv[3]) : 32, given ? std::atoll(argv[4]) : 8};
  const int steps = given ? std::atoi(argv[5]) : 50;
  const std::string opt = given ? argv[6] : "adam";
  const bool must_fall = !given || (argc > 7 && std::string(argv[7]) == "fall");
  const std::string svg = argc > 8 ? argv[8] : "";  // the profile's timeline, as SVG
  if (opt != "sgd" && opt != "momentum" && opt != "adam") {
    if (ctx.is_root()) std::fprintf(stderr, "optimizer: sgd, momentum or adam\n");
    return 2;
  }
  const double lr = opt == "adam" ? 0.02 : opt == "momentum" ? 0.05 : 0.2;
  const double mu = opt == "sgd" ? 0.0 : 0.9;

  wp::array<double, 2> x("x", {s.B, s.I}), t("t", {s.B, s.O}), W1("W1", {s.I, s.H}),
      W2("W2", {s.H, s.O});
  wp::array<double, 2> h("h", {s.B, s.H}), a("a", {s.B, s.H}), y("y", {s.B, s.O});
  wp::array<double, 2> dW1("dW1", {s.I, s.H}), dW2("dW2", {s.H, s.O});
  wp::array<double, 2> m1("m1", {s.I, s.H}), v1("v1", {s.I, s.H}), m2("m2", {s.H, s.O}),
      v2("v2", {s.H, s.O});
  wp::array<double, 0> L("L", {}), p1("p1", {}), p2("p2", {});
  const std::vector<double> tv = targets(s);
  x.init([](const auto& g) { return x_at(g[0], g[1]); });
  t.init([&](const auto& g) { return tv[std::size_t(g[0] * s.O + g[1])]; });
  W1.init([&](const auto& g) { return w_at(g[0], g[1], 3, s.I); });
  W2.init([&](const auto& g) { return w_at(g[0], g[1], 4, s.H); });
  p1.init([](const auto&) { return 1.0; });
  p2.init([](const auto&) { return 1.0; });

  auto [b, n, k] = wp::indices<3>();
  const double inv2b = 1.0 / double(2 * s.B);
  auto forward =
      wp::program(wp::map("h0", wp::space(s.B, s.H), h(b, n) = 0.0),
                  wp::map("fc1", wp::space(s.B, s.H, s.I), h(b, n) += x(b, k) * W1(k, n)),
                  wp::map("act", wp::space(s.B, s.H), a(b, n) = wp::tanh(h(b, n))),
                  wp::map("y0", wp::space(s.B, s.O), y(b, n) = 0.0),
                  wp::map("fc2", wp::space(s.B, s.O, s.H), y(b, n) += a(b, k) * W2(k, n)),
                  wp::map("l0", wp::space(), L() = 0.0),
                  wp::map("loss", wp::space(s.B, s.O),
                          L() += (y(b, n) - t(b, n)) * (y(b, n) - t(b, n)) * inv2b));
  auto backward = wp::backward(forward, L, wp::wrt(W1, dW1), wp::wrt(W2, dW2));

  // The updates: ordinary maps over the parameters (the state first, then the parameter: a
  // map may not read an array both before and after writing it), never differentiated:
  // wp::forward_only compiles them without derivative maps.
  auto momentum = [&](auto& W, auto& dW, auto& vel, const std::string& name) {
    return wp::program(wp::forward_only,
                       wp::map(name + ".v", wp::space(W.extent(0), W.extent(1)),
                               vel(b, n) = mu * vel(b, n) + dW(b, n)),
                       wp::map(name + ".w", wp::space(W.extent(0), W.extent(1)),
                               W(b, n) = W(b, n) - lr * vel(b, n)));
  };
  auto adam = [&](auto& W, auto& dW, auto& m, auto& v, const std::string& name) {
    return wp::program(wp::forward_only,
                       wp::map(name + ".mv", wp::space(W.extent(0), W.extent(1)),
                               m(b, n) = 0.9 * m(b, n) + 0.1 * dW(b, n),
                               v(b, n) = 0.999 * v(b, n) + 0.001 * dW(b, n) * dW(b, n)),
                       wp::map(name + ".w", wp::space(W.extent(0), W.extent(1)),
                               W(b, n) = W(b, n) - lr * (m(b, n) / (1.0 - p1())) /
                                                       (wp::sqrt(v(b, n) / (1.0 - p2())) + 1e-8)));
  };
  auto powers = wp::map("powers", wp::space(), p1() = p1() * 0.9, p2() = p2() * 0.999);

  std::vector<double> losses;
  auto train = [&](auto step) {
    auto plan = wp::distribute(step, wp::automatic, ctx);
    if (ctx.is_root()) {
      const std::string ex = plan.explain();
      std::printf("%s\n", ex.substr(0, ex.find('\n')).c_str());  // the grid of every map
    }
    plan.scatter();
    for (int i = 0; i < steps; ++i) {
      const auto before = plan.stats().execute;
      plan.execute();
      plan.gather(L);
      const auto after = plan.stats().execute;
      if (ctx.is_root()) {
        losses.push_back(L.at({}));
        std::printf("step %3d  loss %.6e  rank 0 sent %lld B, received %lld B\n", i + 1,
                    losses.back(), (long long)(after.bytes_sent - before.bytes_sent),
                    (long long)(after.bytes_received - before.bytes_received));
      }
    }
    // where a step's time went: per map and transfer, measured (median step, slowest rank)
    // beside the seconds of the model calibrated on these ranks (each map at its kernel's
    // rate: GEMM or loop, streaming, a map's fixed cost); rank 0 prints, every rank takes part
    const wp::plan_profile profile = plan.profile(wp::machine_model::calibrate(ctx));
    std::cout << profile;
    if (ctx.is_root() && !svg.empty()) std::ofstream(svg) << profile.to_svg();
  };
  if (opt != "adam")
    train(wp::program(forward, backward, momentum(W1, dW1, m1, "momentum1"),
                      momentum(W2, dW2, m2, "momentum2")));
  else
    train(wp::program(forward, backward, wp::program(wp::forward_only, powers),
                      adam(W1, dW1, m1, v1, "adam1"), adam(W2, dW2, m2, v2, "adam2")));

  int status = 0;
  if (ctx.is_root()) {
    const std::vector<double> want = train_serially(s, steps, opt, lr);
    double worst = 0;
    for (int i = 0; i < steps; ++i)
      worst = std::max(worst, std::abs(losses[std::size_t(i)] - want[std::size_t(i)]) /
                                  std::max(1e-300, std::abs(want[std::size_t(i)])));
    const bool same = worst <= 1e-9;
    const bool fell = losses.back() * 10 <= losses.front();
    std::printf(
        "%s, %d steps on %d rank(s): loss %.4e -> %.4e (%s tenfold); largest relative "
        "difference from plain loops %.2g -> %s\n",
        opt.c_str(), steps, ctx.size(), losses.front(), losses.back(),
        fell ? "fell at least" : "did not fall", worst,
        same && (fell || !must_fall) ? "ok" : "FAILED");
    status = same && (fell || !must_fall) ? 0 : 1;
  }
  boost::mpi::broadcast(ctx.comm(), status, 0);
  return status;
}
