#include "intra_node/shared_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace strata {

SharedSegment& SharedSegment::operator=(SharedSegment&& o) noexcept {
  if (this != &o) {
    reset();
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void SharedSegment::reset() {
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

Status SharedSegment::create(const std::string& name, size_t bytes, SharedSegment* out) {
  const int fd = shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  STRATA_REQUIRE(fd >= 0, strataSystemError, "shm_open(%s, O_CREAT) failed: %s", name.c_str(), std::strerror(errno));
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    shm_unlink(name.c_str());
    return makeStatus(strataSystemError, "ftruncate(%s, %zu) failed: %s (is /dev/shm large enough?)", name.c_str(), bytes,
                      std::strerror(err));
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) {
    shm_unlink(name.c_str());
    return makeStatus(strataSystemError, "mmap of %s (%zu bytes) failed: %s", name.c_str(), bytes, std::strerror(err));
  }
  out->reset();
  out->data_ = p;
  out->bytes_ = bytes;
  return Status::Ok();
}

Status SharedSegment::open(const std::string& name, size_t bytes, SharedSegment* out) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  STRATA_REQUIRE(fd >= 0, strataSystemError, "shm_open(%s) failed: %s", name.c_str(), std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) < bytes) {
    close(fd);
    return makeStatus(strataSystemError, "shared segment %s is smaller than %zu bytes", name.c_str(), bytes);
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  STRATA_REQUIRE(p != MAP_FAILED, strataSystemError, "mmap of %s (%zu bytes) failed: %s", name.c_str(), bytes,
                 std::strerror(err));
  out->reset();
  out->data_ = p;
  out->bytes_ = bytes;
  return Status::Ok();
}

void SharedSegment::unlink(const std::string& name) { shm_unlink(name.c_str()); }

std::string SharedSegment::uniqueName(const char* kind) {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  return strformat("/strata-%s-%u-%d-%u-%08x", kind, static_cast<unsigned>(getuid()), static_cast<int>(getpid()),
                   counter.fetch_add(1), rd());
}

}  // namespace strata
