// PlanBuilder: algorithms write their steps in program order, as in the seeds' pseudocode; the
// builder infers the dependencies from the slices each step reads and writes (read after write,
// write after read, write after write), so the executor runs everything the data allows at once.
// Steps that carry no data (barrier messages) take explicit dependencies.
#pragma once

#include <initializer_list>
#include <vector>

#include "kernels/plan/collective.h"
#include "kernels/plan/plan.h"

namespace strata {

class PlanBuilder {
 public:
  explicit PlanBuilder(Plan* plan);

  // In-place calls: every slice of `aliased` is rewritten into `target` + offset, so the plan
  // (and its dependencies) see one buffer. E.g. in-place allgather: send = recv + rank * count.
  void alias(BufferId aliased, BufferId target, size_t offset);

  // Scratch space of `count` elements, disjoint from all scratch handed out before.
  Slice scratch(size_t count);

  // Tags of different phases never collide; a composition gives each level its own phase.
  void setPhase(int phase);
  int phase() const { return phase_; }

  // Views for compositions: a nested algorithm's kSend and kRecv become the slices `send` and
  // `recv` of the current buffers (resolved through the current aliases, so in-place calls
  // compose), and its phases are numbered from `phaseBase`. Views nest; popView restores.
  void pushView(Slice send, Slice recv, int phaseBase);
  void popView();

  // The label of the following steps in error messages ("reduce-scatter", round 3).
  void label(const char* what, int round) {
    what_ = what;
    round_ = round;
  }

  StepId send(int peer, Slice src, int tag, std::initializer_list<StepId> after = {});
  StepId recv(int peer, Slice dst, int tag, std::initializer_list<StepId> after = {});
  // dst = op(srcs...). A single input identical to dst is a no-op (returns kNoStep).
  StepId reduce(Slice dst, const std::vector<Slice>& srcs, std::initializer_list<StepId> after = {});
  StepId reduce(Slice dst, std::initializer_list<Slice> srcs, std::initializer_list<StepId> after = {}) {
    return reduce(dst, std::vector<Slice>(srcs), after);
  }
  // dst = src; no step (kNoStep) when they are the same slice after aliasing or empty.
  StepId copy(Slice dst, Slice src, std::initializer_list<StepId> after = {});
  StepId divide(Slice data, std::initializer_list<StepId> after = {});
  // An intra-node collective step (see NodeOpDesc). Its slices are resolved like any other; it
  // reads its writes and writes its reads' destinations. Node ops form one chain in plan order:
  // every member of a team must enter the team's node ops in the same order, whatever else
  // becomes ready first.
  StepId nodeOp(NodeOpDesc desc, std::initializer_list<StepId> after = {});

  // Explicit extra dependencies of a step (for steps created in loops, and for steps that carry
  // no data but must follow others, as in barriers).
  void addDependency(StepId step, StepId on);
  // The id the next step will get: steps from here on can be named as a range.
  StepId nextStepId() const { return static_cast<StepId>(plan_->steps.size()); }

  // Resolve aliasing as the builder would.
  Slice resolve(Slice s) const;

  // Completes the plan: successor lists, tag phases. The builder must not be used afterwards.
  void finish();

 private:
  struct Access {
    size_t begin, end;
    StepId step;
    bool write;
  };
  StepId addStep(Step step, const std::vector<Slice>& reads, const std::vector<Slice>& writes,
                 std::initializer_list<StepId> after);
  int makeTag(int tag) const;

  Plan* plan_;
  struct Alias {
    bool active = false;
    BufferId target = BufferId::kRecv;
    size_t offset = 0;
  } alias_[kNumBufferIds];
  std::vector<Access> accesses_[kNumBufferIds];
  std::vector<std::vector<StepId>> depLists_;
  struct SavedView {
    Alias alias[kNumBufferIds];
    int phaseBase;
    int phase;
  };
  std::vector<SavedView> views_;
  int phaseBase_ = 0;
  StepId lastNodeOp_ = kNoStep;
  int phase_ = 0;
  int maxPhase_ = 0;
  const char* what_ = "";
  int round_ = 0;
};

// Tags: a phase owns kTagsPerPhase tags; the executor folds the result into the MPI tag range.
constexpr int kTagsPerPhase = 1 << 22;

// In-place calls: alias the smaller buffer into the larger one, as the API's pointers do.
void applyInPlaceAlias(PlanBuilder& b, const CollectiveArgs& args, int rank);

}  // namespace strata
