// InceptionV3's description for bench_networks (a translation unit of its own: the typed
// pieces build beside the rest of the benchmark).

#include "../examples/networks/inception.hpp"

#include <workpart/optimize.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench_networks.hpp"

namespace bench_networks {

namespace {

/// The description's maps that access something, each as the JSON of it and its arrays,
/// sorted: two descriptions of one program in another order give the same list.
std::vector<std::string> running_maps(const wp::program_description& d) {
  std::vector<std::string> maps;
  for (const auto& m : d.maps) {
    if (m.accesses.empty()) continue;
    wp::program_description one;
    one.maps.push_back(m);
    for (const auto& a : m.accesses)
      if (!one.find_array(a.array)) one.arrays.push_back(*d.find_array(a.array));
    maps.push_back(wp::to_json(one));
  }
  std::sort(maps.begin(), maps.end());
  return maps;
}

}  // namespace

/// InceptionV3 at PaSE's size (batch 128, 3 x 299 x 299, 1000 classes, float), all 94
/// convolutions: its training step described piece by piece (wpnet::inception_description:
/// the stem, each module and the head typed and described apart, joined by wp::join_pieces),
/// the full network's typed step being past what GCC 12 compiles here. First the joining is
/// checked against the typed step of one module of each kind (41 convolutions, which compiles):
/// the same maps that run and the same arrays, and data parallelism and the experts' strategy
/// priced alike at each P of `ps`; a line says so. `check` is that line.
workpart::program_description inception3_description(const std::vector<std::int64_t>& ps,
                                                     const wp::machine_model& mm,
                                                     std::string& check) {
  namespace wp = workpart;
  const wpnet::inception_size size{};
  const auto joined_one =
      wpnet::inception_description(size, wpnet::inception_layout::one_each, 0.01f);
  {
    wpnet::inception_size one_each = size;
    one_each.layout = wpnet::inception_layout::one_each;
    wpnet::inception<float> net(one_each);
    auto step = net.step(0.01f);
    const wp::program_description typed = wp::describe(step.program);
    const bool same_maps = running_maps(typed) == running_maps(joined_one);
    bool same_arrays = typed.arrays.size() == joined_one.arrays.size();
    for (const auto& a : typed.arrays) {
      const wp::array_description* j = joined_one.find_array(a.name);
      same_arrays = same_arrays && j && j->shape == a.shape && j->elem_size == a.elem_size;
    }
    double worst = 0;  // the largest relative difference of the two baselines' prices
    for (const std::int64_t P : ps) {
      const int p = int(P);
      for (const auto& [a, b] :
           {std::pair{wp::modelled_cost(typed, wpnet::data_parallel(typed, p), p, mm),
                      wp::modelled_cost(joined_one, wpnet::data_parallel(joined_one, p), p, mm)},
            std::pair{
                wp::modelled_cost(typed, wpnet::inception_expert(typed, p), p, mm),
                wp::modelled_cost(joined_one, wpnet::inception_expert(joined_one, p), p, mm)}})
        worst = std::max(worst, std::abs(a - b) / std::max(a, b));
    }
    std::size_t running = 0;
    for (const auto& m : typed.maps) running += !m.accesses.empty();
    char line[400];
    std::snprintf(line, sizeof line,
                  "pieces joined checked on one module of each kind: the typed step's %zu maps "
                  "(%zu that run) against the joined pieces' %zu: %s maps, %s arrays; data "
                  "parallelism and the experts' strategy priced alike to %.1e at P = %lld .. %lld",
                  typed.maps.size(), running, joined_one.maps.size(),
                  same_maps ? "the same" : "DIFFERENT", same_arrays ? "the same" : "DIFFERENT",
                  worst, static_cast<long long>(ps.front()), static_cast<long long>(ps.back()));
    check = line;
  }
  return wpnet::inception_description(size, wpnet::inception_layout::full, 0.01f);
}

}  // namespace bench_networks
