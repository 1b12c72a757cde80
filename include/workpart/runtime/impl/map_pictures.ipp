#pragma once
/// \file map_pictures.ipp
/// What a map plan shows of itself beside explain(): its pictures (plan/picture.hpp: the
/// terminal block maps and the SVG) and its summary. Bodies of map_runtime.hpp's functions,
/// included by the header (header-only, the default), or compiled once into
/// workpart::compiled (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../map_runtime.hpp"

namespace workpart::detail {

namespace picture_text {
/// "Scatterv (root -> group leaders) + Bcast (over g1)": the steps that bring or take it
/// (without `where`: "Scatterv + Bcast").
inline std::string steps(const std::vector<const std::vector<comm_step>*>& lists,
                         bool where = true) {
  std::string s;
  for (const auto* l : lists)
    for (const auto& st : *l)
      s += (s.empty() ? "" : " + ") + st.collective + (where ? " (" + st.where + ")" : "");
  return s;
}
inline index_t bytes(const std::vector<const std::vector<comm_step>*>& lists) {
  index_t b = 0;
  for (const auto* l : lists)
    for (const auto& st : *l) b += st.total();
  return b;
}
}  // namespace picture_text

WORKPART_DECL std::vector<picture_array> map_runtime::pictures_of(const void* id) const {
  std::vector<picture_array> v;
  for (const auto& ap : arrays_) {
    if (id != nullptr && ap.use.id != id) continue;
    picture_array p;
    p.name = ap.use.name;
    p.shape.assign(ap.use.shape, ap.use.shape + ap.use.rank);
    if (ap.use.read && !ap.reads_own_writes) {
      p.role = "read";
      p.collective = picture_text::steps({&ap.in_steps});
      p.boxes = ap.rbox;
      v.push_back(p);
    }
    if (ap.use.written) {
      p.role = std::string("written: ") + combine_name(ap.use.write_kind);
      p.collective = picture_text::steps({&ap.init_steps, &ap.out_steps});
      p.boxes = ap.wbox;
      p.overlap = ap.wgroup.empty() ? "each writes the same elements"
                                    : "partial results, combined over " + dims_text(ap.wgroup);
      v.push_back(p);
    }
  }
  return v;
}

WORKPART_DECL std::string map_runtime::draw_array(const void* id, const std::string& name) const {
  const std::vector<picture_array> v = pictures_of(id);
  if (v.empty())
    throw plan_error("plan for map '" + name_ + "': draw(" + name + "): the map does not use '" +
                     name + "'");
  std::string s;
  for (const auto& p : v) s += draw_text(p, name_, grid_.str());
  return s;
}

WORKPART_DECL std::string map_runtime::to_svg() const {
  std::vector<picture_edge> edges;
  for (const auto& ap : arrays_) {
    if (!ap.in_steps.empty() || !ap.init_steps.empty())
      edges.push_back({ap.use.name, "root", name_,
                       picture_text::steps({&ap.in_steps, &ap.init_steps}),
                       picture_text::bytes({&ap.in_steps, &ap.init_steps})});
    if (!ap.out_steps.empty())
      edges.push_back({ap.use.name, name_, "root", picture_text::steps({&ap.out_steps}),
                       picture_text::bytes({&ap.out_steps})});
  }
  return draw_svg("plan for map '" + name_ + "' on grid " + grid_.str() + ", " +
                      std::to_string(size_) + " ranks",
                  {picture()}, edges, size_);
}

WORKPART_DECL std::string map_runtime::summary_arrays() const {
  std::string s;
  for (const auto& ap : arrays_) {
    std::string role = ap.use.read && ap.use.written
                           ? std::string("read, written: ") + combine_name(ap.use.write_kind)
                       : ap.use.written ? std::string("written: ") + combine_name(ap.use.write_kind)
                                        : std::string("read");
    const std::vector<const std::vector<comm_step>*> all = {&ap.in_steps, &ap.init_steps,
                                                            &ap.out_steps};
    std::string how = picture_text::steps(all, false);
    if (how.empty()) how = "nothing moves";
    std::string line = "  " + ap.use.name;
    line.resize(std::max<std::size_t>(line.size() + 1, 12), ' ');
    line += role;
    line.resize(std::max<std::size_t>(line.size() + 1, 32), ' ');
    line += how;
    line.resize(std::max<std::size_t>(line.size() + 1, 64), ' ');
    s += line + bytes_text(picture_text::bytes(all)) + "\n";
  }
  return s;
}

WORKPART_DECL std::string map_runtime::summary() const {
  return "map '" + name_ + "' on grid " + grid_.str() + ", " + std::to_string(size_) +
         " ranks (bytes over all ranks):\n" + summary_arrays() + "  scatter " +
         bytes_text(predicted_total(true)) + ", gather " + bytes_text(predicted_total(false)) +
         "\n";
}

}  // namespace workpart::detail
