#pragma once
/// \file conv_train_step.hpp
/// A strided 1-D convolution's training step, shared by the tests that train it (mpi.train),
/// describe it (unit.describe) and price it through workpart-optimize (mpi.describe_tool):
/// z = 0; z(f, i) += sum_r w(f, c, r) x(c, 2i + r); a = tanh(z); L = sum 0.5 (a - t)^2 (a
/// rank-0 loss, maps over wp::space()); wp::backward for the filters w; SGD on w.

#include <workpart/workpart.hpp>

namespace testprog {

/// The step's arrays; step(lr) is the program over them (this object must outlive it and
/// stay where it is). Output positions To = (Tn - R) / 2 + 1.
struct conv_train_step {
  workpart::index_t C, Tn, F, R, To;
  workpart::array<double, 2> x, t, z, a;
  workpart::array<double, 3> w, dw;
  workpart::array<double, 0> L;

  conv_train_step(workpart::index_t c, workpart::index_t tn, workpart::index_t f,
                  workpart::index_t r)
      : C(c),
        Tn(tn),
        F(f),
        R(r),
        To((tn - r) / 2 + 1),
        x("x", {C, Tn}),
        t("t", {F, To}),
        z("z", {F, To}),
        a("a", {F, To}),
        w("w", {F, C, R}),
        dw("dw", {F, C, R}),
        L("L", {}) {}

  auto step(double lr) {
    namespace wp = workpart;
    auto [f, i, c, r] = wp::indices<4>();
    auto fwd = wp::program(
        wp::map("z0", wp::space(F, To), z(f, i) = 0.0),
        wp::map("conv", wp::space(F, To, C),
                z(f, i) += wp::sum(wp::range(r, 0, R), w(f, c, r) * x(c, 2 * i + r))),
        wp::map("act", wp::space(F, To), a(f, i) = wp::tanh(z(f, i))),
        wp::map("l0", wp::space(), L() = 0.0),
        wp::map("loss", wp::space(F, To), L() += 0.5 * (a(f, i) - t(f, i)) * (a(f, i) - t(f, i))));
    return wp::program(
        fwd, wp::backward(fwd, L, wp::wrt(w, dw)),
        wp::map("sgd", wp::space(F, C, R), w(f, i, c) = w(f, i, c) - lr * dw(f, i, c)));
  }
};

}  // namespace testprog
