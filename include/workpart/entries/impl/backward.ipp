/// \file backward.ipp
/// wp::backward's assembly of the backward program from each map's derivative maps (a
/// run-time loop over the forward program's entries: no map type is needed here).

#include <string>
#include <vector>

namespace workpart::detail {

WORKPART_DECL program backward_program(const program& fwd, const void* seed, seed_maker make_seed,
                                       const seed_request& from,
                                       const std::vector<wrt_entry>& wrts) {
  require_maps(fwd, "wp::backward");
  std::vector<statement_record> recs;
  fwd.for_each_map([&](const map_interface& m) {
    append_statement_records(recs, m.name(), m.rank(), m.lo(), m.hi(), m.access_events());
  });
  if (!program_writes(recs, from.seeded))
    throw plan_error("wp::backward: the program does not write '" + from.seeded_name +
                     "'; differentiate from an array one of its maps writes");
  check_differentiable(recs);

  std::vector<gradient_request> reqs;
  for (const wrt_entry& w : wrts) {
    if (!w.shape_problem.empty()) throw shape_error(w.shape_problem);
    for (const gradient_request& r : reqs)
      if (r.param == w.req.param)
        throw plan_error("wp::backward: '" + w.req.param_name + "' is named in two wp::wrt");
    if (!program_touches(recs, w.req.param))
      throw plan_error("wp::backward: wp::wrt('" + w.req.param_name + "', '" + w.req.grad_name +
                       "'): no map of the program reads or writes '" + w.req.param_name + "'");
    reqs.push_back(w.req);
  }
  check_gradient_arrays(recs, reqs, from);
  fwd.for_each_map([&](const map_interface& m) {
    if (!m.differentiable())
      throw plan_error("wp::backward: map '" + m.name() + "' was made by " +
                       (m.origin().empty() ? std::string("wp::backward") : m.origin()) +
                       "; a program that holds a backward program is not differentiated again "
                       "(second derivatives are not derived): differentiate the forward maps");
    if (const char* why = m.derivative_refusal())
      throw plan_error("wp::backward: map '" + m.name() + "' has no derivative: " + why);
  });

  gradient_table grads;
  std::vector<const void*> params;
  for (const gradient_request& r : reqs) {
    params.push_back(r.param);
    grads.add_named(r.param, r.grad, r.accumulate);
  }

  program seed_part;
  make_seed(seed, grads, seed_part);
  // In order, last forward map first: each map's first writes are known to the next.
  program contributions;
  for (std::size_t m = fwd.size(); m-- > 0;) fwd.map(m).derivative(grads, contributions);
  // In order: the first map asked for a buffer zeroes it, the others run over empty spaces.
  // Reversed, the one that runs is the last of them: the last writer before the buffer's
  // readers, which is the writer the optimizer's pairwise model prices.
  program zeros;
  for (std::size_t w = 0; w < wrts.size(); ++w) wrts[w].zero(reqs[w].grad, grads, zeros);
  fwd.for_each_map([&](const map_interface& m) { m.zero_maps_of_written(grads, zeros); });
  contributions.for_each_map([&](const map_interface& m) { m.zero_maps_of(grads, zeros); });
  program out = program_access::reversed(zeros);
  out.add(seed_part).add(contributions);

  const std::vector<const void*> needed = arrays_needing_gradients(recs, params);
  // Their names derive from the forward maps': a second backward program of the same maps
  // in one step repeats them, and the message then says so (schedule_grids).
  const std::string origin = from.is_loss ? "wp::backward of the loss '" + from.seeded_name + "'"
                                          : "wp::backward from wp::seed('" + from.seeded_name +
                                                "', '" + from.dy_name + "')";
  for (std::size_t m = 0; m < out.size(); ++m) {  // made here: no one else holds them yet
    map_interface& mi = program_access::map(out, m);
    mi.prune_unneeded(grads, needed);
    mi.set_origin(origin);
  }
  out.keep(grads.owned());
  return out;
}

}  // namespace workpart::detail
