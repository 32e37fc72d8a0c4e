#include "kernels/plan/plan_builder.h"

#include <algorithm>

#include "kernels/common/status.h"

namespace strata {

PlanBuilder::PlanBuilder(Plan* plan) : plan_(plan) {}

void PlanBuilder::alias(BufferId aliased, BufferId target, size_t offset) {
  alias_[static_cast<int>(aliased)] = Alias{true, target, offset};
}

Slice PlanBuilder::resolve(Slice s) const {
  const Alias& a = alias_[static_cast<int>(s.buffer)];
  if (!a.active) return s;
  return Slice{a.target, s.offset + a.offset, s.count};
}

Slice PlanBuilder::scratch(size_t count) {
  Slice s{BufferId::kScratch, plan_->scratchCount, count};
  plan_->scratchCount += count;
  return s;
}

void PlanBuilder::setPhase(int phase) {
  phase_ = phaseBase_ + phase;
  maxPhase_ = std::max(maxPhase_, phase_);
}

void PlanBuilder::pushView(Slice send, Slice recv, int phaseBase) {
  SavedView saved;
  for (int b = 0; b < kNumBufferIds; ++b) saved.alias[b] = alias_[b];
  saved.phaseBase = phaseBase_;
  saved.phase = phase_;
  views_.push_back(saved);
  const Slice s = resolve(send), r = resolve(recv);
  alias_[static_cast<int>(BufferId::kSend)] = Alias{true, s.buffer, s.offset};
  alias_[static_cast<int>(BufferId::kRecv)] = Alias{true, r.buffer, r.offset};
  phaseBase_ = phaseBase;
  setPhase(0);
}

void PlanBuilder::popView() {
  const SavedView saved = views_.back();
  views_.pop_back();
  for (int b = 0; b < kNumBufferIds; ++b) alias_[b] = saved.alias[b];
  phaseBase_ = saved.phaseBase;
  phase_ = saved.phase;
}

int PlanBuilder::makeTag(int tag) const { return phase_ * kTagsPerPhase + (tag % kTagsPerPhase); }

StepId PlanBuilder::addStep(Step step, const std::vector<Slice>& reads, const std::vector<Slice>& writes,
                            std::initializer_list<StepId> after) {
  const StepId id = static_cast<StepId>(plan_->steps.size());
  std::vector<StepId> deps;
  for (StepId a : after) {
    if (a != kNoStep) deps.push_back(a);
  }
  // Read after write: depend on every earlier writer of an overlapping range.
  for (const Slice& r : reads) {
    if (r.count == 0) continue;
    for (const Access& a : accesses_[static_cast<int>(r.buffer)]) {
      if (a.write && a.begin < r.end() && r.offset < a.end) deps.push_back(a.step);
    }
  }
  // Write after read or write: depend on every earlier access of an overlapping range.
  for (const Slice& w : writes) {
    if (w.count == 0) continue;
    for (const Access& a : accesses_[static_cast<int>(w.buffer)]) {
      if (a.begin < w.end() && w.offset < a.end) deps.push_back(a.step);
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());

  // Record this step's accesses. A write that covers an earlier access dominates it: any later
  // access that overlaps the earlier one overlaps this write too and so depends on it.
  for (const Slice& w : writes) {
    if (w.count == 0) continue;
    auto& list = accesses_[static_cast<int>(w.buffer)];
    list.erase(std::remove_if(list.begin(), list.end(),
                              [&](const Access& a) { return a.begin >= w.offset && a.end <= w.end(); }),
               list.end());
    list.push_back(Access{w.offset, w.end(), id, true});
  }
  for (const Slice& r : reads) {
    if (r.count == 0) continue;
    bool coveredByOwnWrite = false;
    for (const Slice& w : writes) {
      if (w.buffer == r.buffer && w.offset <= r.offset && r.end() <= w.end()) coveredByOwnWrite = true;
    }
    if (!coveredByOwnWrite) accesses_[static_cast<int>(r.buffer)].push_back(Access{r.offset, r.end(), id, false});
  }

  step.what = what_;
  step.round = round_;
  plan_->steps.push_back(step);
  depLists_.push_back(std::move(deps));
  return id;
}

StepId PlanBuilder::send(int peer, Slice src, int tag, std::initializer_list<StepId> after) {
  Step s;
  s.kind = StepKind::kSend;
  s.peer = peer;
  s.tag = makeTag(tag);
  s.src = resolve(src);
  return addStep(s, {s.src}, {}, after);
}

StepId PlanBuilder::recv(int peer, Slice dst, int tag, std::initializer_list<StepId> after) {
  Step s;
  s.kind = StepKind::kRecv;
  s.peer = peer;
  s.tag = makeTag(tag);
  s.dst = resolve(dst);
  return addStep(s, {}, {s.dst}, after);
}

StepId PlanBuilder::reduce(Slice dst, const std::vector<Slice>& srcs, std::initializer_list<StepId> after) {
  Step s;
  s.kind = StepKind::kReduce;
  s.dst = resolve(dst);
  std::vector<Slice> reads;
  reads.reserve(srcs.size());
  for (const Slice& in : srcs) reads.push_back(resolve(in));
  if (s.dst.count == 0) return kNoStep;
  if (reads.size() == 1 && reads[0] == s.dst) return kNoStep;
  s.inputBegin = static_cast<uint32_t>(plan_->inputs.size());
  s.inputCount = static_cast<uint32_t>(reads.size());
  plan_->inputs.insert(plan_->inputs.end(), reads.begin(), reads.end());
  return addStep(s, reads, {s.dst}, after);
}

StepId PlanBuilder::copy(Slice dst, Slice src, std::initializer_list<StepId> after) {
  Step s;
  s.kind = StepKind::kCopy;
  s.dst = resolve(dst);
  s.src = resolve(src);
  if (s.dst.count == 0 || s.dst == s.src) return kNoStep;
  return addStep(s, {s.src}, {s.dst}, after);
}

StepId PlanBuilder::divide(Slice data, std::initializer_list<StepId> after) {
  Step s;
  s.kind = StepKind::kDivide;
  s.dst = resolve(data);
  if (s.dst.count == 0) return kNoStep;
  return addStep(s, {s.dst}, {s.dst}, after);
}

StepId PlanBuilder::nodeOp(NodeOpDesc desc, std::initializer_list<StepId> after) {
  Step s;
  s.kind = StepKind::kNodeOp;
  std::vector<Slice> reads, writes;
  for (Slice& w : desc.writes) {
    w = resolve(w);
    reads.push_back(w);
  }
  for (NodeRead& r : desc.reads) {
    r.dst = resolve(r.dst);
    writes.push_back(r.dst);
  }
  s.nodeOp = static_cast<uint32_t>(plan_->nodeOps.size());
  plan_->nodeOps.push_back(std::move(desc));
  const StepId id = addStep(s, reads, writes, after);
  addDependency(id, lastNodeOp_);
  lastNodeOp_ = id;
  return id;
}

void PlanBuilder::addDependency(StepId step, StepId on) {
  if (step == kNoStep || on == kNoStep || on >= step) return;
  depLists_[step].push_back(on);
}

void PlanBuilder::finish() {
  const size_t n = plan_->steps.size();
  plan_->deps.clear();
  std::vector<uint32_t> succCount(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    auto& list = depLists_[i];
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    plan_->steps[i].depBegin = static_cast<uint32_t>(plan_->deps.size());
    plan_->steps[i].depCount = static_cast<uint32_t>(list.size());
    for (StepId d : list) {
      plan_->deps.push_back(d);
      ++succCount[d];
    }
  }
  plan_->succBegin.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) plan_->succBegin[i + 1] = plan_->succBegin[i] + succCount[i];
  plan_->succ.assign(plan_->deps.size(), 0);
  std::vector<uint32_t> fill(plan_->succBegin.begin(), plan_->succBegin.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    for (StepId d : depLists_[i]) plan_->succ[fill[d]++] = static_cast<StepId>(i);
  }
  plan_->phases = std::max(plan_->phases, maxPhase_ + 1);
}

const char* bufferName(BufferId b) {
  switch (b) {
    case BufferId::kSend: return "send";
    case BufferId::kRecv: return "recv";
    case BufferId::kScratch: return "scratch";
  }
  return "?";
}

const char* stepKindName(StepKind k) {
  switch (k) {
    case StepKind::kSend: return "send";
    case StepKind::kRecv: return "recv";
    case StepKind::kReduce: return "reduce";
    case StepKind::kCopy: return "copy";
    case StepKind::kDivide: return "divide";
    case StepKind::kNodeOp: return "node-op";
  }
  return "?";
}

namespace {
std::string sliceText(const Slice& s, size_t elem) {
  return strformat("%s[%zu,+%zu] (%zu B)", bufferName(s.buffer), s.offset, s.count, s.count * elem);
}
}  // namespace

std::string Plan::describe(StepId id, DataType type) const {
  if (id >= steps.size()) return "step ?";
  const Step& s = steps[id];
  const size_t elem = dataTypeSize(type);
  std::string text = strformat("step %u (%s", id, stepKindName(s.kind));
  if (s.what[0] != '\0') text += strformat(", %s round %d", s.what, s.round);
  text += ")";
  switch (s.kind) {
    case StepKind::kSend:
      text += strformat(" to rank %d tag %d of %s", s.peer, s.tag, sliceText(s.src, elem).c_str());
      break;
    case StepKind::kRecv:
      text += strformat(" from rank %d tag %d into %s", s.peer, s.tag, sliceText(s.dst, elem).c_str());
      break;
    case StepKind::kReduce:
      text += strformat(" of %u inputs into %s", s.inputCount, sliceText(s.dst, elem).c_str());
      break;
    case StepKind::kCopy:
      text += strformat(" %s -> %s", sliceText(s.src, elem).c_str(), sliceText(s.dst, elem).c_str());
      break;
    case StepKind::kDivide: text += strformat(" %s by %d", sliceText(s.dst, elem).c_str(), divisor); break;
    case StepKind::kNodeOp:
      text += strformat(" %s over %zu ranks", nodeOps[s.nodeOp].what, nodeOps[s.nodeOp].members.size());
      break;
  }
  return text;
}

std::string Plan::dump(DataType type) const {
  std::string out = strformat("plan '%s': %zu steps, scratch %zu elements\n", algorithm.c_str(), steps.size(),
                              scratchCount);
  for (StepId i = 0; i < steps.size(); ++i) {
    out += "  " + describe(i, type);
    const Step& s = steps[i];
    if (s.depCount) {
      out += "  after";
      for (uint32_t d = 0; d < s.depCount; ++d) out += strformat(" %u", deps[s.depBegin + d]);
    }
    out += "\n";
  }
  return out;
}

void applyInPlaceAlias(PlanBuilder& b, const CollectiveArgs& args, int rank) {
  if (!args.inPlace) return;
  const InPlaceAlias alias = inPlaceAlias(args, rank);
  if (alias.sendInsideRecv) {
    b.alias(BufferId::kSend, BufferId::kRecv, alias.offset);
  } else {
    b.alias(BufferId::kRecv, BufferId::kSend, alias.offset);
  }
}

}  // namespace strata
