// The flat tuple of a program's maps and plans (core/flat_tuple.hpp): elements in order
// through unpack, get, concat of flat and std tuples, reversed; moves where given rvalues;
// parts built in a braced list evaluated in order.

#include <catch2/catch.hpp>

#include <workpart/core/flat_tuple.hpp>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace wd = workpart::detail;

namespace {
template <class Tuple>
std::string joined(const Tuple& t) {
  return wd::unpack(t, [](const auto&... e) {
    std::string s;
    ((s += std::string(e) + ","), ...);
    return s;
  });
}
}  // namespace

TEST_CASE("flat_tuple holds its elements in order", "[flat_tuple]") {
  wd::flat_tuple<int, std::string, double> t(1, "two", 3.5);
  STATIC_REQUIRE(decltype(t)::size == 3);
  CHECK(t.get<0>() == 1);
  CHECK(t.get<1>() == "two");
  CHECK(t.get<2>() == 3.5);
  t.get<1>() += "!";
  CHECK(t.unpack([](int a, const std::string& b, double c) {
    return std::to_string(a) + b + std::to_string(int(c));
  }) == "1two!3");
  const wd::flat_tuple<> none;
  CHECK(none.unpack([](auto&&... e) { return sizeof...(e); }) == 0);
}

TEST_CASE("concat joins flat and std tuples in order, reversed reverses", "[flat_tuple]") {
  const wd::flat_tuple<const char*, const char*> a("a", "b");
  const std::tuple<const char*> b("c");
  const wd::flat_tuple<> empty;
  const std::tuple<const char*, const char*, const char*> c("d", "e", "f");
  auto all = wd::concat(a, empty, b, std::tuple<>{}, c);
  STATIC_REQUIRE(decltype(all)::size == 6);
  CHECK(joined(all) == "a,b,c,d,e,f,");
  CHECK(joined(wd::reversed(all)) == "f,e,d,c,b,a,");
  CHECK(joined(wd::reversed(wd::flat_tuple<const char*>("x"))) == "x,");
  // a tuple of tuples: the parts' elements, part after part
  const wd::flat_tuple<std::tuple<const char*>, wd::flat_tuple<const char*, const char*>> parts(
      std::tuple<const char*>("p"), wd::flat_tuple<const char*, const char*>("q", "r"));
  CHECK(joined(wd::concat_parts(parts)) == "p,q,r,");
}

TEST_CASE("concat moves from rvalue parts and copies from lvalues", "[flat_tuple]") {
  wd::flat_tuple<std::unique_ptr<int>, std::vector<int>> a(std::make_unique<int>(7),
                                                           std::vector<int>{1, 2, 3});
  auto moved = wd::concat(std::move(a), std::tuple<int>(4));
  CHECK(*moved.get<0>() == 7);
  CHECK(moved.get<1>().size() == 3);
  CHECK(moved.get<2>() == 4);
  std::vector<int> v{5, 6};
  wd::flat_tuple<std::vector<int>> kept(v);
  auto copied = wd::concat(kept, kept);
  CHECK(kept.get<0>().size() == 2);
  CHECK(copied.get<0>() == copied.get<1>());
}

TEST_CASE("a braced flat_tuple evaluates its elements in order", "[flat_tuple]") {
  std::vector<int> order;
  auto next = [&](int k) {
    order.push_back(k);
    return k;
  };
  wd::flat_tuple<int, int, int> t{next(1), next(2), next(3)};
  CHECK(order == std::vector<int>{1, 2, 3});
  CHECK(t.get<2>() == 3);
}
