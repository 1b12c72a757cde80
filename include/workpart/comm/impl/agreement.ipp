#pragma once
/// \file agreement.ipp
/// The bodies of agreement.hpp's functions that are not templates: included by the header
/// (header-only, the default), or compiled once into workpart::compiled
/// (WORKPART_SEPARATE_COMPILATION; see config.hpp).

#include "../agreement.hpp"

namespace workpart::detail {

WORKPART_DECL failure current_failure() noexcept {
  try {
    throw;
  } catch (const shape_error& e) {
    return {error_kind::shape, untagged(e.what()), {}, 0};
  } catch (const grid_error& e) {
    return {error_kind::grid, untagged(e.what()), {}, 0};
  } catch (const plan_error& e) {
    return {error_kind::plan, untagged(e.what()), {}, 0};
  } catch (const comm_error& e) {
    // the message without the tag and the "routine: " comm_error puts before it
    std::string m = untagged(e.what());
    if (m.rfind(e.routine() + ": ", 0) == 0) m.erase(0, e.routine().size() + 2);
    return {error_kind::comm, m, e.routine(), e.result_code()};
  } catch (const backend_error& e) {
    return {error_kind::backend, untagged(e.what()), {}, 0};
  } catch (const error& e) {
    return {error_kind::error, untagged(e.what()), {}, 0};
  } catch (const boost::mpi::exception& e) {
    return {error_kind::comm, e.what(), e.routine(), e.result_code()};
  } catch (const std::bad_alloc&) {
    return {error_kind::foreign, "out of memory (std::bad_alloc)", {}, 0};
  } catch (const std::exception& e) {
    return {error_kind::foreign, e.what(), {}, 0};
  } catch (...) {
    return {error_kind::foreign, "an exception that is not a std::exception", {}, 0};
  }
}

WORKPART_DECL void broadcast_text(const boost::mpi::communicator& comm, std::string& s, int root) {
  std::uint64_t n = s.size();
  boost::mpi::broadcast(comm, n, root);
  s.resize(std::size_t(n));
  if (n > 0) boost::mpi::broadcast(comm, s.data(), int(n), root);
}

WORKPART_DECL void agree(const boost::mpi::communicator& comm, const failure& mine,
                         std::uint64_t fingerprint, name_rank naming, const std::string& mismatch) {
  const int size = comm.size(), rank = comm.rank();
  // Minima over the ranks of: the earliest failure (when, then rank); whether all failed; the
  // fingerprint and its complement (min == ~min(~x): every rank has the same fingerprint).
  const std::uint64_t none = ~std::uint64_t(0);
  std::uint64_t in[4] = {mine ? (std::uint64_t(mine.when) << 32) | std::uint64_t(rank) : none,
                         mine ? 1u : 0u, fingerprint, ~fingerprint};
  std::uint64_t out[4] = {};
  MPI_Request req;
  WORKPART_MPI_CHECK(MPI_Iallreduce, (in, out, 4, MPI_UINT64_T, MPI_MIN, comm, &req));
  for (int done = 0;;) {
    WORKPART_MPI_CHECK(MPI_Test, (&req, &done, MPI_STATUS_IGNORE));
    if (done) break;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  if (out[0] != none) {
    const int first_bad = int(out[0] & 0xffffffffu);
    failure f = mine;
    int kind = int(f.kind);
    broadcast_text(comm, f.message, first_bad);
    broadcast_text(comm, f.routine, first_bad);
    boost::mpi::broadcast(comm, f.code, first_bad);
    boost::mpi::broadcast(comm, kind, first_bad);
    f.kind = error_kind(kind);
    const bool all_failed = out[1] == 1;
    const bool prefix = naming == name_rank::always || (!all_failed && size > 1);
    rethrow(f, prefix ? "rank " + std::to_string(first_bad) + ": " : std::string());
  }
  if (out[2] != ~out[3]) {  // every rank knows: root's text (it may name root's values)
    std::string text = mismatch;
    broadcast_text(comm, text, 0);
    throw plan_error(text);
  }
}
}  // namespace workpart::detail
