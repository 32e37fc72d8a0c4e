#include "src/core/peer_notices.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "inter_node/mpi_check.h"
#include "kernels/common/log.h"

namespace strata {

namespace {

constexpr int kTag = 0;  // the notices' own communicator carries nothing else
// Refusals of calls not reached yet, kept per peer on average: a refusing rank runs at most one
// refusal ahead of its peers (PeerNotices::refused), so a few suffice.
constexpr size_t kAheadPerRank = 16;

// What MPI may still use after its communicator closed is kept for the life of the process, under
// one lock (communicators close on any thread): sends still on their way (MPI may read their
// buffers until it delivers them: a notice's few hundred bytes per peer, only where a call failed),
// and retired communicators.
std::mutex& keptMutex() {
  static auto* mutex = new std::mutex;
  return *mutex;
}
template <typename T>
void keepForMpi(std::unique_ptr<T> sends) {
  static auto* kept = new std::vector<std::unique_ptr<T>>;
  std::lock_guard<std::mutex> lock(keptMutex());
  kept->push_back(std::move(sends));
}

}  // namespace

void retireComm(MPI_Comm* comm) {
  static auto* kept = new std::vector<MPI_Comm>;
  std::lock_guard<std::mutex> lock(keptMutex());
  kept->push_back(*comm);
  *comm = MPI_COMM_NULL;
}

void NoticeLedger::refusedHere(uint64_t seq) {
  refused_.insert(seq);
  if (refused_.size() > kRemembered) refused_.erase(refused_.begin());
  std::vector<bool> answered = failed_;  // a failed peer has answered every call
  answered[static_cast<size_t>(rank_)] = true;
  // Peers that refused it before this rank did have answered already.
  const auto [first, last] = ahead_.equal_range(seq);
  for (auto it = first; it != last; ++it) answered[static_cast<size_t>(it->second.rank)] = true;
  ahead_.erase(first, last);
  if (std::find(answered.begin(), answered.end(), false) != answered.end()) answered_[seq] = std::move(answered);
  if (answered_.size() > kRemembered) answered_.erase(answered_.begin());
}

int NoticeLedger::unanswered(uint64_t* call) const {
  if (!verdict_.ok()) return -1;
  for (const auto& [seq, answered] : answered_) {
    for (size_t r = 0; r < answered.size(); ++r) {
      if (answered[r]) continue;
      if (call != nullptr) *call = seq;
      return static_cast<int>(r);
    }
  }
  return -1;
}

void NoticeLedger::started(uint64_t seq) {
  started_ = std::max(started_, seq);
  const auto due = ahead_.upper_bound(started_);
  for (auto it = ahead_.begin(); it != due; ++it) refusedThere(it->second);
  ahead_.erase(ahead_.begin(), due);
}

void NoticeLedger::heard(const Notice& n) {
  if (n.rank < 0 || n.rank >= size_ || n.rank == rank_) return;  // not a peer's
  const size_t from = static_cast<size_t>(n.rank);
  if (n.kind == Notice::kFailed) {
    failed_[from] = true;
    for (auto it = answered_.begin(); it != answered_.end();) {
      it->second[from] = true;
      it = std::find(it->second.begin(), it->second.end(), false) == it->second.end() ? answered_.erase(it) : std::next(it);
    }
    verdict_.update(makeStatus(strataRemoteError, "rank %d's communicator failed in call #%llu (%s)", n.rank,
                               static_cast<unsigned long long>(n.seq), n.what));
    return;
  }
  if (refused_.count(n.seq) != 0) {
    auto it = answered_.find(n.seq);
    if (it != answered_.end()) {
      it->second[from] = true;
      if (std::find(it->second.begin(), it->second.end(), false) == it->second.end()) answered_.erase(it);
    }
    return;
  }
  if (n.seq <= started_) {
    refusedThere(n);
  } else if (ahead_.size() < kAheadPerRank * static_cast<size_t>(size_)) {
    ahead_.emplace(n.seq, n);
  }
}

void NoticeLedger::refusedThere(const Notice& n) {
  if (refused_.count(n.seq) != 0) return;
  verdict_.update(makeStatus(strataRemoteError, "rank %d refused call #%llu, which this rank makes (%s)", n.rank,
                             static_cast<unsigned long long>(n.seq), n.what));
}

PeerNotices::~PeerNotices() { close(true, WaitPolicy{}); }


Status PeerNotices::open(MPI_Comm comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  STRATA_CHECK_MPI(MPI_Comm_rank(comm, &rank_));
  STRATA_CHECK_MPI(MPI_Comm_size(comm, &size_));
  ledger_ = NoticeLedger(rank_, size_);
  toldFailed_.assign(static_cast<size_t>(size_), false);
  refusers_.assign(static_cast<size_t>(size_), false);
  if (size_ == 1) return Status::Ok();
  if (rank_ == 0) {
    std::random_device device;
    id_ = (static_cast<uint64_t>(device()) << 32) ^ device() ^
          static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  }
  STRATA_CHECK_MPI(MPI_Bcast(&id_, 1, MPI_UINT64_T, 0, comm));
  STRATA_CHECK_MPI(MPI_Comm_dup(comm, &comm_));
  STRATA_CHECK_MPI(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
  STRATA_CHECK_MPI(MPI_Irecv(&incoming_, sizeof(Notice), MPI_BYTE, MPI_ANY_SOURCE, kTag, comm_, &receive_));
  return Status::Ok();
}

bool PeerNotices::close(bool retire, const WaitPolicy& policy) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (comm_ == MPI_COMM_NULL) return retire;
  // What already arrived counts. Where notices went either way on a communicator that did not
  // fail, every one still due here answers a refusal of this rank's (a peer that made a refused
  // call failed, and then so did this rank): once all are in, none is on its way.
  if (!readArrived().ok() || broken_) retire = true;
  if (!retire && carried_) retire = !awaitAnswers(lock, policy).ok() || !ledger_.verdict().ok();
  if (receive_ != MPI_REQUEST_NULL) {
    MPI_Cancel(&receive_);
    MPI_Status status;
    MPI_Wait(&receive_, &status);  // a cancelled receive completes at once
    int cancelled = 1;
    MPI_Test_cancelled(&status, &cancelled);
    if (!cancelled) retire = true;  // a notice came in after all: more may follow
  }
  reapSent();
  for (auto& out : outgoing_) {
    for (MPI_Request& r : out->requests) {
      if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
    }
    keepForMpi(std::move(out));
  }
  outgoing_.clear();
  if (retire) {
    retireComm(&comm_);
  } else {
    MPI_Comm_free(&comm_);
  }
  return retire;
}

Status PeerNotices::refused(uint64_t seq, const std::string& what, const WaitPolicy& policy) {
  std::unique_lock<std::mutex> lock(mutex_);
  STRATA_CHECK(awaitAnswers(lock, policy));
  // Its own refusal first: a peer's refusal of this same call, already here, is then no news.
  ledger_.refusedHere(seq);
  const Status heard = readArrived();
  if (!heard.ok()) return heard;
  Notice n;
  n.kind = Notice::kRefused;
  n.seq = seq;
  std::strncpy(n.what, what.c_str(), sizeof n.what - 1);
  std::vector<int> to;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_) to.push_back(r);
  }
  tell(n, to);
  return Status::Ok();
}

void PeerNotices::failed(uint64_t seq, const std::string& what) {
  std::lock_guard<std::mutex> lock(mutex_);
  broken_ = true;
  (void)readArrived();  // a peer's word already here: then this failure is that word's
  if (!ledger_.verdict().ok()) {
    answerRefusers();  // failed on its peers' word: they know; a rank that refused waits for an answer
    return;
  }
  std::vector<int> to;
  for (int r = 0; r < size_; ++r) {
    if (r != rank_ && !toldFailed_[static_cast<size_t>(r)]) to.push_back(r);
  }
  tellFailed(seq, what, to);
}

void PeerNotices::answerRefusers() {
  std::vector<int> to;
  for (int r = 0; r < size_; ++r) {
    if (refusers_[static_cast<size_t>(r)] && !toldFailed_[static_cast<size_t>(r)]) to.push_back(r);
  }
  tellFailed(ledger_.startedCall(), ledger_.verdict().message(), to);
}

void PeerNotices::tellFailed(uint64_t seq, const std::string& what, const std::vector<int>& to) {
  if (to.empty()) return;
  Notice n;
  n.kind = Notice::kFailed;
  n.seq = seq;
  std::strncpy(n.what, what.c_str(), sizeof n.what - 1);
  for (int r : to) toldFailed_[static_cast<size_t>(r)] = true;
  tell(n, to);
}

bool PeerNotices::readDue() const {
  if (!quiet_.load(std::memory_order_acquire)) return true;
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  return now - lastRead_.load(std::memory_order_relaxed) >= std::chrono::nanoseconds(kQuietReadEvery).count();
}

Status PeerNotices::started(uint64_t seq, const WaitPolicy& policy) {
  started_.store(seq, std::memory_order_release);
  // Quiet, a call reads nothing as it starts: a peer's refusal of it reaches it in its first wait
  // that lasts (Waiter), and a refusing rank waits for its answer until it does.
  if (comm_ == MPI_COMM_NULL || quiet_.load(std::memory_order_acquire)) return Status::Ok();
  std::unique_lock<std::mutex> lock(mutex_);
  STRATA_CHECK(readArrived());
  return awaitAnswers(lock, policy);
}

Status PeerNotices::awaitAnswers(std::unique_lock<std::mutex>& lock, const WaitPolicy& policy) {
  if (ledger_.unanswered() < 0) return ledger_.verdict();
  WaitPolicy own = policy;
  own.peers = nullptr;  // read here, under the lock
  Waiter w(own);
  int waitingFor = -1;
  uint64_t call = 0;
  while ((waitingFor = ledger_.unanswered(&call)) >= 0) {
    const std::string what = strformat(
        "rank %d to say whether it refused call #%llu too (this rank refused it; a rank that made that call "
        "answers at its next one)",
        waitingFor, static_cast<unsigned long long>(call));
    lock.unlock();  // another thread (a device collective's) may tell or read meanwhile
    const Status idle = w.idle([&] { return what; });
    lock.lock();
    STRATA_CHECK(idle);
    STRATA_CHECK(readArrived());
  }
  return readArrived();
}

Status PeerNotices::poll() {
  if (!readDue()) return Status::Ok();
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return Status::Ok();  // another thread is reading them
  return readArrived();
}

void PeerNotices::tell(const Notice& n, const std::vector<int>& to) {
  if (comm_ == MPI_COMM_NULL) return;
  reapSent();
  auto out = std::make_unique<Outgoing>();
  out->notice = n;
  out->notice.rank = rank_;
  out->notice.comm = id_;
  for (int r : to) {
    MPI_Request request = MPI_REQUEST_NULL;
    const int rc = MPI_Isend(&out->notice, sizeof(Notice), MPI_BYTE, r, kTag, comm_, &request);
    if (rc != MPI_SUCCESS) {
      STRATA_WARN("telling rank %d about call #%llu: %s", r, static_cast<unsigned long long>(n.seq),
                  mpiErrorText(rc).c_str());
      continue;
    }
    out->requests.push_back(request);
  }
  carried_ = true;
  outgoing_.push_back(std::move(out));
}

Status PeerNotices::readArrived() {
  ledger_.started(started_.load(std::memory_order_acquire));
  while (receive_ != MPI_REQUEST_NULL) {
    int arrived = 0;
    int rc = MPI_Test(&receive_, &arrived, MPI_STATUS_IGNORE);
    if (rc == MPI_SUCCESS && !arrived) break;
    if (rc == MPI_SUCCESS) {
      incoming_.what[sizeof incoming_.what - 1] = '\0';
      carried_ = true;
      if (incoming_.comm == id_) {  // else a stale one, for a communicator that had this context before
        ledger_.heard(incoming_);
        const size_t from = static_cast<size_t>(incoming_.rank);
        if (incoming_.kind == Notice::kRefused && from < refusers_.size()) refusers_[from] = true;
      }
      // Done for: the ranks that refused a call hear so now (they wait for every peer's answer), not
      // at this rank's next call. The others heard the same word themselves, or were told.
      if (broken_ || !ledger_.verdict().ok()) answerRefusers();
      rc = MPI_Irecv(&incoming_, sizeof(Notice), MPI_BYTE, MPI_ANY_SOURCE, kTag, comm_, &receive_);
    }
    if (rc != MPI_SUCCESS) {  // no more notices: the waits keep their bound
      STRATA_WARN("reading the peers' notices: %s; waits now end at their bound only", mpiErrorText(rc).c_str());
      receive_ = MPI_REQUEST_NULL;
    }
  }
  lastRead_.store(std::chrono::steady_clock::now().time_since_epoch().count(), std::memory_order_relaxed);
  quiet_.store(ledger_.quiet(), std::memory_order_release);
  return ledger_.verdict();
}

void PeerNotices::reapSent() {
  for (auto it = outgoing_.begin(); it != outgoing_.end();) {
    int done = 0;
    auto& requests = (*it)->requests;
    if (MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE) == MPI_SUCCESS && done) {
      it = outgoing_.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace strata
