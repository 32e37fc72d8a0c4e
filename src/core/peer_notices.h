// What a rank tells its peers when a collective fails on it, so that they stop waiting for it at
// once instead of at the communicator's bound (STRATA_TIMEOUT).
//
// A rank that refuses a call on its own (its arguments, a wait of its own that failed before the
// call communicated) says "refused call #s" to every peer. Its peers that run call s, or have run it
// (a rank whose part of the plan did not need the refusing rank finishes it), cannot trust the
// communicator any more: their messages of call s may never be received. So they fail with
// strataRemoteError, their communicator becomes unusable (as after a timeout), and they answer the
// ranks that refused: "communicator failed in call #s". Ranks that all refused the same call (the
// same wrong argument on every rank: the common case) hear each other's refusals of a call they
// refused themselves and let them be; before its next call or refusal, a rank that refused one
// waits until every peer has answered (refused it too, or failed), since until then it cannot tell
// which case it is in (and so a rank refusing call after call runs at most one refusal ahead). A failure every rank finds itself (the plan agreement's) is told to no one. A
// communicator that fails on its own (a timeout, a transport error, a device collective on the
// progress thread, strataCommAbort ending a call) tells every peer, so they stop at once instead of
// each waiting out its own bound.
//
// Calls are numbered alike on every rank: each collective call made on a communicator that is not
// already unusable counts, refused or not (every rank makes the same calls in the same order). A
// call that one rank makes alone, refused or not, puts the numbering apart: its peers' next call
// fails as refused.
//
// The notices travel on a duplicate of the communicator (their own context, so they never meet a
// plan's messages). A wait that lasts past 20 us reads them (WaitPolicy::peers); a call reads them
// as it starts only where the last read left something to act on (kQuietReadEvery): a small call
// that ends in microseconds pays nothing for them. The communicators of one that failed are not freed: a message may still be on its
// way, and MPI would hand it to whichever communicator took the freed one's context next (Open MPI
// matches a peer's messages in order per context, so a stale one stalled the next communicator's
// first message for good). One whose refusals were all answered is freed: no notice is then due.
// A notice carries its communicator's number, drawn at creation: a stale one is dropped.
//
// Cost: a refused call, p - 1 notices from its rank and one answer from each peer that made it; a
// communicator failing on its own, p - 1 notices (one failing on a peer's word tells only the
// ranks that refused).
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "kernels/common/bounded_wait.h"
#include "kernels/common/status.h"

namespace strata {

// Keeps an MPI communicator for the life of the process instead of freeing it: messages may still
// be on their way to it (its strata communicator failed, or a call was refused), and MPI would
// deliver them to whichever communicator took its context next.
void retireComm(MPI_Comm* comm);

struct Notice {
  enum Kind : int32_t { kRefused = 1, kFailed = 2 };
  int32_t kind = kRefused;
  int32_t rank = 0;  // who says it
  uint64_t comm = 0; // the communicator's number, drawn at its creation (a stale notice from another is dropped)
  uint64_t seq = 0;  // the call, numbered from 1 on every rank alike
  char what[240] = {};  // the error it met, truncated, NUL-terminated
};

// The rules, apart from MPI (unit-tested on their own).
class NoticeLedger {
 public:
  explicit NoticeLedger(int rank = 0, int size = 1) : rank_(rank), size_(size), failed_(static_cast<size_t>(size), false) {}
  // This rank refused call `seq`: its peers' refusals of that call are no news.
  void refusedHere(uint64_t seq);
  // This rank starts call `seq` (its own checks passed); refusals of it heard before now count.
  void started(uint64_t seq);
  // A peer's notice.
  void heard(const Notice& n);
  // Ok, or the error that ends this rank's use of the communicator (strataRemoteError); once an
  // error, always that one.
  const Status& verdict() const { return verdict_; }
  // The latest call this rank started.
  uint64_t startedCall() const { return started_; }
  // Nothing to act on: the verdict ok, no refusal of this rank's waiting for answers, no refusal of
  // a call this rank has not reached.
  bool quiet() const { return verdict_.ok() && answered_.empty() && ahead_.empty(); }
  // After this rank refused calls: the first peer that has not yet said, of one of them, whether
  // it refused it too (or that its communicator failed), and that call; -1 where none. Until every
  // peer has, this rank's next call cannot tell whether its peers ran the refused call (then its
  // messages or shared-memory rounds could meet theirs) or refused it as well (then the
  // communicator is fine), so it waits.
  int unanswered(uint64_t* call = nullptr) const;

 private:
  void refusedThere(const Notice& n);

  static constexpr size_t kRemembered = 65536;  // this rank's refusals kept (the latest)
  int rank_ = 0;
  int size_ = 1;
  uint64_t started_ = 0;
  std::vector<bool> failed_;                          // per rank: its communicator failed
  std::set<uint64_t> refused_;                        // this rank's refusals
  std::map<uint64_t, std::vector<bool>> answered_;    // this rank's refusals not every peer answered yet
  std::multimap<uint64_t, Notice> ahead_;             // refusals of calls this rank has not reached yet
  Status verdict_;
};

class PeerNotices final : public PeerCheck {
 public:
  PeerNotices() = default;
  PeerNotices(const PeerNotices&) = delete;
  PeerNotices& operator=(const PeerNotices&) = delete;
  ~PeerNotices();

  // Duplicates `comm` and draws the communicator's number (collective over it); posts the first receive.
  Status open(MPI_Comm comm);
  // Cancels the receive and frees the duplicate, or keeps it (retireComm) where `retire`, or where
  // notices came in and not every refusal of this rank's was answered within `policy`'s bound (a
  // notice may be on its way); notices still on their way out are left to MPI. Whether it kept it.
  bool close(bool retire, const WaitPolicy& policy);

  // This rank refused call `seq`: once every peer answered its earlier refusals (under `policy`: a
  // rank refusing call after call runs at most one refusal ahead of its peers), tells every peer.
  // Where what arrived already ended the communicator (a peer refused a call this rank made), tells
  // nothing and returns that error: the caller fails the communicator instead (failComm).
  Status refused(uint64_t seq, const std::string& what, const WaitPolicy& policy);
  // This rank's communicator failed in (or after) call `seq`: tells every peer, once; where it failed
  // on a peer's word (the verdict), only the ranks that refused a call, which wait for an answer
  // (the others heard that word themselves).
  void failed(uint64_t seq, const std::string& what);
  // This rank starts call `seq`: the notices heard so far, and the verdict (read only where the
  // ledger was not quiet: kQuietReadEvery). Where this rank refused an earlier call, it first waits
  // (under `policy`) until every peer has said whether it refused it too (NoticeLedger::unanswered).
  Status started(uint64_t seq, const WaitPolicy& policy);
  // Reads what arrived: the verdict. A thread that finds another one reading returns at once. Once
  // the verdict is an error, answers the ranks that refused a call (the communicator failed here),
  // from whichever thread heard it (a device collective's progress thread too).
  Status poll() override;

  // While the ledger is quiet, a call reads no notice as it starts, and poll() reads at most once
  // per kQuietReadEvery: a read is an MPI_Test (a pass of MPI's progress engine) and a notice is a
  // failure's, rare. Reading at every start and every 16th poll of a wait cost a 2-rank node
  // allreduce of 8 B 0.60 us against 0.44-0.47 without notices (Zen 4 VM, medians of 12 launches).
  static constexpr std::chrono::microseconds kQuietReadEvery{200};

 private:
  struct Outgoing {
    Notice notice;
    std::vector<MPI_Request> requests;
  };
  // Under mutex_: sends `n` to the ranks `to`; a failure to those not told yet; the failure to the
  // ranks whose refusal was heard (they wait for every peer's answer).
  void tell(const Notice& n, const std::vector<int>& to);
  void tellFailed(uint64_t seq, const std::string& what, const std::vector<int>& to);
  void answerRefusers();
  // Under `lock` (of mutex_, released between polls): until every peer answered this rank's refusals.
  Status awaitAnswers(std::unique_lock<std::mutex>& lock, const WaitPolicy& policy);
  Status readArrived();           // under mutex_
  void reapSent();                // under mutex_

  // A read is due: the ledger is not quiet, or kQuietReadEvery passed since the last.
  bool readDue() const;

  std::mutex mutex_;
  std::atomic<uint64_t> started_{0};   // the latest call started (the ledger hears of it at the next read)
  std::atomic<bool> quiet_{true};      // NoticeLedger::quiet at the last read
  std::atomic<int64_t> lastRead_{0};   // steady_clock nanoseconds of the last read
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  Notice incoming_;
  MPI_Request receive_ = MPI_REQUEST_NULL;
  std::deque<std::unique_ptr<Outgoing>> outgoing_;
  std::vector<bool> toldFailed_;  // per rank: told this communicator failed
  std::vector<bool> refusers_;    // per rank: refused a call (its notice came in)
  bool broken_ = false;           // this communicator failed here (failed())
  uint64_t id_ = 0;               // the communicator's number (Notice::comm)
  bool carried_ = false;  // a notice went out or came in
  NoticeLedger ledger_;
};

}  // namespace strata
