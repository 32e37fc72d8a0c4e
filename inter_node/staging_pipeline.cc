#include "inter_node/staging_pipeline.h"

#include <algorithm>
#include <cmath>

#include "inter_node/mpi_check.h"

namespace strata {

StagingPool StagingPool::sized(size_t chunkBytes, int slots) {
  StagingPool p;
  if (chunkBytes != 0) {
    p.slotBytes = chunkBytes;
    p.fixedChunks = true;
  }
  p.slots = slots;
  return p;
}

size_t stagingChunkBytes(size_t bytes, size_t slotBytes) {
  const double c = std::sqrt(static_cast<double>(bytes) * 62500.0);
  const size_t chunk = static_cast<size_t>(c) & ~size_t{4095};
  return std::min(std::max(chunk, size_t{64} << 10), slotBytes);
}

const char* StageTimeline::name(int stage) {
  switch (stage) {
    case kToHost: return "to-host";
    case kNetwork: return "network";
    case kToDevice: return "to-device";
    case kReduce: return "reduce";
  }
  return "?";
}

void StagingPipeline::begin(char* memory, const StagingPool& pool, size_t maxMessageBytes, DeviceRuntime* dev,
                            MPI_Comm comm) {
  memory_ = memory;
  pool_ = pool;
  maxMessageBytes_ = maxMessageBytes;
  dev_ = dev;
  comm_ = comm;
  timeline_ = nullptr;
  messages_.clear();
  freeSend_.clear();
  freeRecv_.clear();
  // Lowest slot numbers first, so small runs touch the same few pages.
  for (int s = pool.slots - 1; s >= 0; --s) {
    freeSend_.push_back(s);
    freeRecv_.push_back(pool.slots + s);
  }
  sendQueue_.clear();
  copying_.clear();
  receiving_.clear();
  requests_.clear();
  requestChunk_.clear();
  landing_.clear();
}

void StagingPipeline::timeStages(StageTimeline* timeline, std::chrono::steady_clock::time_point origin) {
  timeline_ = timeline;
  origin_ = origin;
}

double StagingPipeline::now() const {
  return timeline_ == nullptr ? 0.0
                              : std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void StagingPipeline::recordStage(int stage, double start, size_t bytes) {
  if (timeline_ != nullptr) timeline_->intervals[stage].push_back({start, now(), bytes});
}

size_t StagingPipeline::chunkBytes(size_t bytes) const {
  return std::min(pool_.fixedChunks ? pool_.slotBytes : stagingChunkBytes(bytes, pool_.slotBytes), maxMessageBytes_);
}

void StagingPipeline::addSend(StepId step, const char* src, size_t bytes, int peer, int tag, int planTag) {
  Message m{};
  m.step = step;
  m.device = const_cast<char*>(src);
  m.bytes = bytes;
  m.chunk = chunkBytes(bytes);
  // The first chunks ramp up from kFirstChunk, doubling, so the first one lands (and the stages
  // after it start) after a short transfer; from the first that would reach m.chunk, all are
  // m.chunk long. A fixed chunk (STRATA_STAGE_CHUNK) does not ramp.
  m.ramp = 0;
  m.rampBytes = 0;
  while (!pool_.fixedChunks && (kFirstChunk << m.ramp) < m.chunk && m.rampBytes < bytes) {
    m.rampBytes += kFirstChunk << m.ramp;
    ++m.ramp;
  }
  if (bytes == 0) {
    m.chunks = 1;
  } else if (bytes <= m.rampBytes) {
    m.chunks = m.ramp;
  } else {
    m.chunks = m.ramp + static_cast<uint32_t>((bytes - m.rampBytes + m.chunk - 1) / m.chunk);
  }
  m.left = m.chunks;
  m.peer = peer;
  m.tag = tag;
  m.planTag = planTag;
  m.send = true;
  messages_.push_back(m);
  sendQueue_.push_back(static_cast<uint32_t>(messages_.size() - 1));
}

void StagingPipeline::addRecv(StepId step, char* dst, size_t bytes, int peer, int tag, int planTag) {
  addSend(step, dst, bytes, peer, tag, planTag);  // the same cut into chunks
  sendQueue_.pop_back();
  messages_.back().send = false;
  receiving_.push_back(static_cast<uint32_t>(messages_.size() - 1));
}

size_t StagingPipeline::chunkOffset(const Message& m, uint32_t index) const {
  if (index < m.ramp) return kFirstChunk * ((size_t{1} << index) - 1);
  return m.rampBytes + static_cast<size_t>(index - m.ramp) * m.chunk;
}

size_t StagingPipeline::chunkLength(const Message& m, uint32_t index) const {
  const size_t off = chunkOffset(m, index);
  const size_t full = index < m.ramp ? kFirstChunk << index : m.chunk;
  return std::min(full, m.bytes - std::min(m.bytes, off));
}

Status StagingPipeline::poll(bool* progressed, std::vector<Landed>* landed, std::vector<Completed>* completed) {
  STRATA_CHECK(freeLandedSlots(progressed));
  STRATA_CHECK(postCopiedSends(progressed));
  STRATA_CHECK(startSendCopies(progressed));
  STRATA_CHECK(matchArrivedChunks(progressed));
  return testRequests(progressed, landed, completed);
}

// Send chunks take free send slots in the order their messages became ready.
Status StagingPipeline::startSendCopies(bool* progressed) {
  while (!sendQueue_.empty() && !freeSend_.empty()) {
    const uint32_t mi = sendQueue_.front();
    Message& m = messages_[mi];
    Chunk c{mi, m.nextChunk, freeSend_.back()};
    freeSend_.pop_back();
    c.started = now();
    const size_t off = chunkOffset(m, c.index);
    STRATA_CHECK(dev_->copyAsync(DeviceQueue::kToHost, slotMemory(c.slot), m.device + off, chunkLength(m, c.index)));
    STRATA_CHECK(dev_->record(DeviceQueue::kToHost, &c.marker));
    copying_.push_back(c);
    if (++m.nextChunk == m.chunks) sendQueue_.pop_front();
    *progressed = true;
  }
  return Status::Ok();
}

// Chunks whose copy to the host completed go on the wire (the to-host queue completes in order),
// at most kChunksOnWire of one message at a time: the receiver's first chunk then lands after about
// one chunk's transfer instead of sharing the link with the whole pool's, so the stages after it
// start sooner, and two in flight keep a link busy (its bandwidth times its latency is far below a
// chunk). Copied chunks wait in their slots. Nothing overtakes a held chunk on its (peer, tag):
// chunks of one message go out in order, and so do messages whose tags coincide (folded into a
// small MPI_TAG_UB, two phases' tags can), which the receiver matches in order.
Status StagingPipeline::postCopiedSends(bool* progressed) {
  held_.clear();
  for (size_t k = 0; k < copying_.size();) {
    Chunk& c = copying_[k];
    if (!c.copied) {
      STRATA_CHECK(dev_->query(c.marker, &c.copied));
      if (!c.copied) break;
      recordStage(StageTimeline::kToHost, c.started, chunkLength(messages_[c.message], c.index));
    }
    Message& m = messages_[c.message];
    const std::pair<int, int> channel{m.peer, m.tag};
    if (m.onWire >= kChunksOnWire || std::find(held_.begin(), held_.end(), channel) != held_.end()) {
      held_.push_back(channel);
      ++k;
      continue;
    }
    c.started = now();
    MPI_Request req = MPI_REQUEST_NULL;
    const int rc = MPI_Isend(slotMemory(c.slot), static_cast<int>(chunkLength(m, c.index)), MPI_BYTE, m.peer, m.tag,
                             comm_, &req);
    if (rc != MPI_SUCCESS) return mpiError("MPI_Isend", rc, STRATA_WHERE);
    ++m.onWire;
    requests_.push_back(req);
    requestChunk_.push_back(c);
    copying_.erase(copying_.begin() + static_cast<std::ptrdiff_t>(k));
    *progressed = true;
  }
  return Status::Ok();
}

// A receive's next chunk takes a free receive slot only once it has arrived: slots never wait for
// a sender. A message's chunks match in order (MPI does not overtake between one sender and tag),
// and a receive whose (peer, tag) an earlier receive still waits on is not probed for: a chunk
// that arrives between the two probes belongs to the earlier one.
Status StagingPipeline::matchArrivedChunks(bool* progressed) {
  held_.clear();
  for (size_t k = 0; k < receiving_.size() && !freeRecv_.empty();) {
    Message& m = messages_[receiving_[k]];
    const std::pair<int, int> channel{m.peer, m.tag};
    if (std::find(held_.begin(), held_.end(), channel) != held_.end()) {
      ++k;
      continue;
    }
    int found = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    int rc = MPI_Improbe(m.peer, m.tag, comm_, &found, &handle, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return mpiError("MPI_Improbe", rc, STRATA_WHERE);
    if (!found) {
      held_.push_back(channel);
      ++k;
      continue;
    }
    Chunk c{receiving_[k], m.nextChunk, freeRecv_.back()};
    freeRecv_.pop_back();
    c.started = now();
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Imrecv(slotMemory(c.slot), static_cast<int>(chunkLength(m, c.index)), MPI_BYTE, &handle, &req);
    if (rc != MPI_SUCCESS) return mpiError("MPI_Imrecv", rc, STRATA_WHERE);
    requests_.push_back(req);
    requestChunk_.push_back(c);
    *progressed = true;
    if (++m.nextChunk == m.chunks) receiving_.erase(receiving_.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return Status::Ok();
}

Status StagingPipeline::testRequests(bool* progressed, std::vector<Landed>* landed,
                                     std::vector<Completed>* completed) {
  if (requests_.empty()) return Status::Ok();
  completedIndices_.resize(requests_.size());
  int outcount = 0;
  const int rc = MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &outcount, completedIndices_.data(),
                              MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) return mpiError("MPI_Testsome", rc, STRATA_WHERE);
  if (outcount == 0 || outcount == MPI_UNDEFINED) return Status::Ok();
  *progressed = true;
  for (int k = 0; k < outcount; ++k) {
    Chunk& c = requestChunk_[static_cast<size_t>(completedIndices_[static_cast<size_t>(k)])];
    Message& m = messages_[c.message];
    recordStage(StageTimeline::kNetwork, c.started, chunkLength(m, c.index));
    if (m.send) {
      freeSend_.push_back(c.slot);
      --m.onWire;
      if (--m.left == 0) completed->push_back({m.step, kNoMarker});
      continue;
    }
    // Arrived: copy it to the device; the slot is free once the copy completes.
    const size_t off = chunkOffset(m, c.index);
    const size_t len = chunkLength(m, c.index);
    c.started = now();
    STRATA_CHECK(dev_->copyAsync(DeviceQueue::kToDevice, m.device + off, slotMemory(c.slot), len));
    STRATA_CHECK(dev_->record(DeviceQueue::kToDevice, &c.marker));
    landing_.push_back(c);
    landed->push_back({m.step, off, len, c.marker});
    // Chunks may complete out of order; the queue is in order, so the last copy enqueued covers all.
    if (--m.left == 0) completed->push_back({m.step, c.marker});
  }
  size_t w = 0;
  for (size_t r = 0; r < requests_.size(); ++r) {
    if (requests_[r] == MPI_REQUEST_NULL) continue;
    requests_[w] = requests_[r];
    requestChunk_[w] = requestChunk_[r];
    ++w;
  }
  requests_.resize(w);
  requestChunk_.resize(w);
  return Status::Ok();
}

Status StagingPipeline::freeLandedSlots(bool* progressed) {
  while (!landing_.empty()) {
    bool landed = false;
    STRATA_CHECK(dev_->query(landing_.front().marker, &landed));
    if (!landed) break;
    const Chunk& c = landing_.front();
    recordStage(StageTimeline::kToDevice, c.started, chunkLength(messages_[c.message], c.index));
    freeRecv_.push_back(landing_.front().slot);
    landing_.pop_front();
    *progressed = true;
  }
  return Status::Ok();
}

Status StagingPipeline::drained() {
  bool progressed = false;
  return freeLandedSlots(&progressed);
}

bool StagingPipeline::idle() const {
  return sendQueue_.empty() && copying_.empty() && receiving_.empty() && requests_.empty() && landing_.empty();
}

bool StagingPipeline::deviceCopiesPending() const {
  return !landing_.empty() || std::any_of(copying_.begin(), copying_.end(), [](const Chunk& c) { return !c.copied; });
}

StepId StagingPipeline::oldestStep() const {
  StepId oldest = kNoStep;
  for (const Message& m : messages_) {
    if (m.left != 0) oldest = std::min(oldest, m.step);
  }
  return oldest;
}

std::string StagingPipeline::describe() const {
  size_t copied = 0, sending = 0;
  for (const Chunk& c : copying_) copied += c.copied ? 1 : 0;
  for (const Chunk& c : requestChunk_) sending += messages_[c.message].send ? 1 : 0;
  std::string s = strformat("staging: %zu send message(s) waiting for a slot, %zu chunk(s) copying to the host (%zu copied, "
                            "waiting to go on the wire), %zu chunk(s) sent and not yet taken, %zu received and not yet "
                            "complete, %zu copying to the device; free slots %zu of %d send, %zu of %d receive",
                            sendQueue_.size(), copying_.size(), copied, sending, requestChunk_.size() - sending,
                            landing_.size(), freeSend_.size(), pool_.slots, freeRecv_.size(), pool_.slots);
  // Each unfinished request's chunk: a send the receiver has already taken (its receive of that
  // chunk done) tells a lost completion from a chunk that never reached the receiver's matching.
  if (!requestChunk_.empty()) {
    s += "; on the wire:";
    for (const Chunk& c : requestChunk_) {
      const Message& m = messages_[c.message];
      s += strformat(" %s rank %d tag %d (chunk %u of %u)", m.send ? "to" : "from", m.peer, m.planTag, c.index, m.chunks);
    }
  }
  if (!receiving_.empty()) {
    s += "; receives waiting for chunks from";
    for (uint32_t mi : receiving_) {
      const Message& m = messages_[mi];
      s += strformat(" rank %d tag %d (chunk %u of %u)", m.peer, m.planTag, m.nextChunk, m.chunks);
    }
  }
  return s;
}

void StagingPipeline::abandon() {
  for (size_t r = 0; r < requests_.size(); ++r) {
    if (requests_[r] == MPI_REQUEST_NULL) continue;
    if (!messages_[requestChunk_[r].message].send) MPI_Cancel(&requests_[r]);
    MPI_Request_free(&requests_[r]);
  }
  requests_.clear();
  requestChunk_.clear();
  sendQueue_.clear();
  copying_.clear();
  receiving_.clear();
  landing_.clear();
}

}  // namespace strata
