#pragma once
/// \file profile.hpp
/// `plan.profile()`: where an execute() spends its time. Per map and per transfer (a
/// redistribution or a combine of partial results) the measured seconds -- the median over the
/// executes so far on each rank, then the slowest rank's -- beside the seconds the machine
/// model gives it, and a timeline of the last execute() on every rank. The runtime measures
/// (sample_window, timeline_mark: a clock read per map and transfer, never per point) and
/// collect_profile() agrees on the figures; the modelled seconds are filled in above the
/// runtime (profile.hpp at the top: the optimizer's model, plans on paper).

#include <boost/mpi/communicator.hpp>
#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "../config.hpp"

namespace workpart {

struct machine_model;

/// What a plan's executes took, beside what the model says they take (`plan.profile()`).
/// The same on every rank; `std::cout << p` prints the table on rank 0 only.
struct plan_profile {
  struct row {
    std::string kind;     ///< "map", or the transfer's collective ("Alltoallw", "Allreduce(sum)")
    std::string name;     ///< the map's name, or "<array>: <from> -> <to>"
    std::string grid;     ///< a map's grid ("" for a transfer)
    int map = -1;         ///< the map's place in the program (-1: a transfer)
    int transfer = -1;    ///< the transfer's place in plan.stats().redistributions (-1: a map)
    int executes = 0;     ///< executes measured (the last sample_capacity of them at most)
    double measured = 0;  ///< seconds: the median over those executes per rank, slowest rank
    double modelled = 0;  ///< seconds the machine model gives it
    index_t bytes = 0;    ///< a transfer's bytes over all ranks in a later execute() (received)
  };
  /// Maps and transfers in the order an execute() runs them.
  std::vector<row> rows;
  /// One interval of the last execute() on one rank, in seconds from that rank's start of it:
  /// `row` indexes `rows`; -1 is a wait for the other ranks (the failure agreement after a
  /// map that reads data, and at the end of the step).
  struct event {
    int rank = 0;
    int row = -1;
    double start = 0, end = 0;
  };
  std::vector<event> timeline;
  int ranks = 1;
  int rank = 0;      ///< this rank (operator<< prints on rank 0)
  int executes = 0;  ///< executes so far
  /// The median execute()'s seconds (slowest rank), and the sum of the rows' modelled seconds.
  double step_measured = 0, step_modelled = 0;
  std::string model;  ///< the machine model the modelled seconds are of, in words

  /// Executes whose seconds a median is over, at most: the most recent ones.
  static constexpr int sample_capacity = 255;

  /// The table: one line per row, measured, modelled and their ratio, then the step.
  WORKPART_DECL std::string str() const;
  WORKPART_DECL std::string to_json() const;
  /// The last execute() as a self-contained SVG page: a lane per rank, a bar per map (blue),
  /// transfer (orange) and wait (grey), each titled with its name and seconds.
  WORKPART_DECL std::string to_svg() const;
};

/// Prints p.str() on rank 0; nothing on the other ranks.
WORKPART_DECL std::ostream& operator<<(std::ostream& os, const plan_profile& p);

namespace detail {

/// The seconds of the most recent executes of one map or transfer (a ring of
/// plan_profile::sample_capacity), and their median.
class sample_window {
 public:
  void add(double seconds) {
    if (v_.size() < std::size_t(plan_profile::sample_capacity))
      v_.push_back(seconds);
    else
      v_[next_] = seconds;
    next_ = (next_ + 1) % std::size_t(plan_profile::sample_capacity);
    ++added_;
  }
  /// Samples held: the most recent sample_capacity at most.
  int size() const { return int(v_.size()); }
  /// Samples ever added (the executes so far, for the step's window).
  int added() const { return added_; }
  /// The median (the mean of the middle two of an even count); 0 when empty.
  WORKPART_DECL double median() const;

 private:
  std::vector<double> v_;
  std::size_t next_ = 0;
  int added_ = 0;
};

/// One interval of an execute() on this rank: `row` as plan_profile::event's.
struct timeline_mark {
  int row = -1;
  double start = 0, end = 0;
};

/// Collective: every rank's rows (measured: this rank's median, executes: its count) and its
/// marks of the last execute() become one profile, the same on every rank: each row's and the
/// step's slowest median, every rank's timeline. The modelled seconds are left at 0.
WORKPART_DECL plan_profile collect_profile(const boost::mpi::communicator& comm,
                                           std::vector<plan_profile::row> rows,
                                           const sample_window& steps,
                                           const std::vector<timeline_mark>& marks);

/// WORKPART_LOG=info: the measured profile's table in the log (rank 0; no modelled column:
/// the model is above the runtime), each line prefixed as the log's.
WORKPART_DECL void log_profile(const plan_profile& p);

}  // namespace detail
}  // namespace workpart

#if WORKPART_HEADER_ONLY
#include "impl/profile.ipp"
#endif
