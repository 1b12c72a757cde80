// wp::backward of three nested reductions (sum / max_of / min_of) in every order of their
// indices, against central finite differences; the forms are in backward_nested_forms.hpp
// (tests/unit/test_backward_nested.cpp has two-deep nests and the rest).

#include "backward_nested_forms.hpp"

TEST_CASE("backward: three nested sums in every index order", "[backward][sum][nested]") {
  three_deep_all_orders<sum_k, sum_k, sum_k>();
}

TEST_CASE("backward: three nested reductions, kinds mixed, in every index order",
          "[backward][sum][nested]") {
  three_deep_all_orders<max_k, sum_k, min_k>();
  three_deep_all_orders<sum_k, min_k, max_k>();
}
