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

void StagingPipeline::begin(char* memory, const StagingPool& pool, size_t maxMessageBytes, DeviceRuntime* dev,
                            MPI_Comm comm) {
  memory_ = memory;
  pool_ = pool;
  maxMessageBytes_ = maxMessageBytes;
  dev_ = dev;
  comm_ = comm;
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

void StagingPipeline::addSend(StepId step, const char* src, size_t bytes, int peer, int tag) {
  Message m{};
  m.step = step;
  m.device = const_cast<char*>(src);
  m.bytes = bytes;
  m.chunk = std::min(pool_.fixedChunks ? pool_.slotBytes : stagingChunkBytes(bytes, pool_.slotBytes), maxMessageBytes_);
  m.chunks = bytes == 0 ? 1 : static_cast<uint32_t>((bytes + m.chunk - 1) / m.chunk);
  m.left = m.chunks;
  m.peer = peer;
  m.tag = tag;
  m.send = true;
  messages_.push_back(m);
  sendQueue_.push_back(static_cast<uint32_t>(messages_.size() - 1));
}

void StagingPipeline::addRecv(StepId step, char* dst, size_t bytes, int peer, int tag) {
  addSend(step, dst, bytes, peer, tag);  // the same cut into chunks
  sendQueue_.pop_back();
  messages_.back().send = false;
  receiving_.push_back(static_cast<uint32_t>(messages_.size() - 1));
}

size_t StagingPipeline::chunkLength(const Message& m, uint32_t index) const {
  const size_t off = static_cast<size_t>(index) * m.chunk;
  return std::min(m.chunk, m.bytes - std::min(m.bytes, off));
}

Status StagingPipeline::poll(bool* progressed, std::vector<Completed>* completed) {
  STRATA_CHECK(freeLandedSlots(progressed));
  STRATA_CHECK(postCopiedSends(progressed));
  STRATA_CHECK(startSendCopies(progressed));
  STRATA_CHECK(matchArrivedChunks(progressed));
  return testRequests(progressed, completed);
}

// Send chunks take free send slots in the order their messages became ready.
Status StagingPipeline::startSendCopies(bool* progressed) {
  while (!sendQueue_.empty() && !freeSend_.empty()) {
    const uint32_t mi = sendQueue_.front();
    Message& m = messages_[mi];
    Chunk c{mi, m.nextChunk, freeSend_.back()};
    freeSend_.pop_back();
    const size_t off = static_cast<size_t>(c.index) * m.chunk;
    STRATA_CHECK(dev_->copyAsync(DeviceQueue::kToHost, slotMemory(c.slot), m.device + off, chunkLength(m, c.index)));
    STRATA_CHECK(dev_->record(DeviceQueue::kToHost, &c.marker));
    copying_.push_back(c);
    if (++m.nextChunk == m.chunks) sendQueue_.pop_front();
    *progressed = true;
  }
  return Status::Ok();
}

// Chunks whose copy to the host completed go on the wire (the to-host queue completes in order).
Status StagingPipeline::postCopiedSends(bool* progressed) {
  while (!copying_.empty()) {
    const Chunk& c = copying_.front();
    bool copied = false;
    STRATA_CHECK(dev_->query(c.marker, &copied));
    if (!copied) break;
    const Message& m = messages_[c.message];
    MPI_Request req = MPI_REQUEST_NULL;
    const int rc = MPI_Isend(slotMemory(c.slot), static_cast<int>(chunkLength(m, c.index)), MPI_BYTE, m.peer, m.tag,
                             comm_, &req);
    if (rc != MPI_SUCCESS) return mpiError("MPI_Isend", rc, STRATA_WHERE);
    requests_.push_back(req);
    requestChunk_.push_back(c);
    copying_.pop_front();
    *progressed = true;
  }
  return Status::Ok();
}

// A receive's next chunk takes a free receive slot only once it has arrived: slots never wait for
// a sender. A message's chunks match in order (MPI does not overtake between one sender and tag).
Status StagingPipeline::matchArrivedChunks(bool* progressed) {
  for (size_t k = 0; k < receiving_.size() && !freeRecv_.empty();) {
    Message& m = messages_[receiving_[k]];
    int found = 0;
    MPI_Message handle = MPI_MESSAGE_NULL;
    int rc = MPI_Improbe(m.peer, m.tag, comm_, &found, &handle, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return mpiError("MPI_Improbe", rc, STRATA_WHERE);
    if (!found) {
      ++k;
      continue;
    }
    Chunk c{receiving_[k], m.nextChunk, freeRecv_.back()};
    freeRecv_.pop_back();
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

Status StagingPipeline::testRequests(bool* progressed, std::vector<Completed>* completed) {
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
    if (m.send) {
      freeSend_.push_back(c.slot);
      if (--m.left == 0) completed->push_back({m.step, kNoMarker});
      continue;
    }
    // Arrived: copy it to the device; the slot is free once the copy completes.
    const size_t off = static_cast<size_t>(c.index) * m.chunk;
    STRATA_CHECK(dev_->copyAsync(DeviceQueue::kToDevice, m.device + off, slotMemory(c.slot), chunkLength(m, c.index)));
    STRATA_CHECK(dev_->record(DeviceQueue::kToDevice, &c.marker));
    landing_.push_back(c);
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
    freeRecv_.push_back(landing_.front().slot);
    landing_.pop_front();
    *progressed = true;
  }
  return Status::Ok();
}

bool StagingPipeline::idle() const {
  return sendQueue_.empty() && copying_.empty() && receiving_.empty() && requests_.empty() && landing_.empty();
}

StepId StagingPipeline::oldestStep() const {
  StepId oldest = kNoStep;
  for (const Message& m : messages_) {
    if (m.left != 0) oldest = std::min(oldest, m.step);
  }
  return oldest;
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
