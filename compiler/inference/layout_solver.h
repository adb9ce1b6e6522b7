// The fixed point of layout inference (see layout_inference.h for the
// rules): nodes are the fragments and T.Parallel nests of one kernel,
// constraints tie their layouts together, and Solve decides every node from
// strict to free. Collecting the constraints from the IR is the caller's
// job (layout_inference.cc).
#ifndef TILEC_COMPILER_INFERENCE_LAYOUT_SOLVER_H_
#define TILEC_COMPILER_INFERENCE_LAYOUT_SOLVER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "compiler/inference/layout.h"
#include "compiler/inference/loop_partition.h"
#include "compiler/inference/target_info.h"
#include "compiler/ir/ir.h"

namespace tilec::inference {

// A read-only access that a conversion can satisfy instead: in `nest` (its
// outer loop) fragment `buffer` is only loaded, so when its layout cannot be
// the nest's, the nest can read a staged copy of it (fragment_staging.h).
// Constraints added with one are weak when solving with conversions.
// Or a reduction whose destination cannot be its source's projection: it
// can reduce into a fresh fragment and T.copy that into the destination
// (ConvertReductions, fragment_staging.h).
struct ReadConversion {
  const ir::ForNode* nest = nullptr;
  const ir::BufferNode* buffer = nullptr;
  const ir::ReduceNode* reduce = nullptr;
  bool active() const { return nest != nullptr || reduce != nullptr; }
};

class LayoutSolver {
 public:
  LayoutSolver(int64_t threads, const TargetInfo& target) : threads_(threads), target_(target) {}

  // Nodes; the returned ids index nodes(). Program order is the order of
  // the calls.
  int AddFragment(const ir::Buffer& buffer, std::vector<int64_t> shape);
  int AddNest(const ParallelNest* nest, std::string where);
  // A T.copy moves elements of `bytes` between global or shared memory and
  // fragment `node`.
  void Access(int node, int64_t bytes);

  // `layout` is imposed on `node` by `origin` (which names the statement).
  void Strict(int node, FragmentLayout layout, std::string origin);
  using Convertible = ReadConversion;
  // Hard: a and b have the same layout (`what` at position `where`).
  void Equal(int a, int b, std::string where, std::string what, Convertible weak = {});
  // Hard: dst is src with dimensions `dims` projected away.
  void Project(int dst, int src, std::vector<int> dims, std::string where, std::string what,
               Convertible weak = {});
  // Soft: a T.copy between two whole fragments of the same shape.
  void Copy(int src, int dst, std::string where);

  // Decides every node, or returns the first conflict (INVALID_ARGUMENT).
  // With `convert`, the weak constraints (those with a Convertible) come
  // after every other hard constraint has reached its fixed point, one at a
  // time; one that would conflict, at once or through what it decides, is
  // dropped and its access listed in conversions() instead.
  absl::Status Solve(bool convert = false);
  const std::vector<Convertible>& conversions() const { return conversions_; }

  struct Node {
    std::string name;  // the buffer's name, or "the T.Parallel nest at <position>"
    std::vector<int64_t> shape;
    ir::Buffer buffer;                   // fragments
    const ParallelNest* nest = nullptr;  // nests
    std::optional<FragmentLayout> layout;
    std::string origin;  // why it has its layout
    // The narrowest element of global or shared memory a T.copy moves into
    // or out of this fragment (0: none): its default layout gives each
    // thread runs of a vector of those.
    int64_t access_bytes = 0;
  };
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  enum class Kind : uint8_t { kEqual, kProject, kCopy };
  struct Constraint {
    Kind kind;
    int a, b;               // kProject: a = dst, b = src; kCopy: a = src, b = dst
    std::vector<int> dims;  // kProject: removed dims of b, descending
    std::string where, what;
    Convertible weak;       // weak.active(): a conversion can serve it instead
    bool dropped = false;   // converted instead (Solve with convert)
  };
  // Hard constraints (those allowed by `weak_too`) to a fixed point.
  absl::Status FixedPoint(bool weak_too);

  // Fires one constraint: returns true when it decided a node.
  absl::StatusOr<bool> Fire(const Constraint& c);
  absl::Status Conflict(const Constraint& c, const Node& expected_from, const FragmentLayout& want,
                        const Node& actual) const;
  FragmentLayout ProjectAll(const FragmentLayout& l, const std::vector<int>& dims) const;
  // For a kProject constraint with a decided dst and a free nest src: a
  // layout of the nest whose projection is dst.
  absl::StatusOr<FragmentLayout> Lift(const Constraint& c) const;
  // Decides one free node (false when every node is decided).
  absl::StatusOr<bool> DefaultOne();
  // True when the soft `copy` would decide a node that is the destination of
  // a projection (a reduction) whose source is still free: the reduction
  // decides it once its source is known, and a conversion temporary (a
  // reduction's `<dst>_red`, filled by a copy from dst) then takes the
  // reduction's layout rather than dst's.
  bool ProjectionDecides(const Constraint& copy) const;

  int64_t threads_;
  const TargetInfo& target_;
  std::vector<Node> nodes_;
  std::vector<Constraint> constraints_;
  std::vector<Convertible> conversions_;
  struct StrictEntry {
    int node;
    FragmentLayout layout;
    std::string origin;
  };
  std::vector<StrictEntry> strict_;
};

}  // namespace tilec::inference

#endif  // TILEC_COMPILER_INFERENCE_LAYOUT_SOLVER_H_
