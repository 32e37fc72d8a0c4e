// SharedSegment: a POSIX shared-memory object mapped into this process. The node team creates its
// segments under unique names and unlinks them as soon as every member has mapped them, so nothing
// is left in /dev/shm even when a process is killed later.
#pragma once

#include <cstddef>
#include <string>

#include "kernels/common/status.h"

namespace strata {

class SharedSegment {
 public:
  SharedSegment() = default;
  SharedSegment(const SharedSegment&) = delete;
  SharedSegment& operator=(const SharedSegment&) = delete;
  SharedSegment(SharedSegment&& o) noexcept { *this = std::move(o); }
  SharedSegment& operator=(SharedSegment&& o) noexcept;
  ~SharedSegment() { reset(); }

  // Creates a new object (fails if the name exists), sizes it and maps it, zero-filled.
  static Status create(const std::string& name, size_t bytes, SharedSegment* out);
  // Maps an existing object created by another member.
  static Status open(const std::string& name, size_t bytes, SharedSegment* out);
  // Removes the name (the memory lives on while mapped). A missing name is not an error: every
  // member unlinks after mapping, whoever is first wins.
  static void unlink(const std::string& name);
  // "/strata-<uid>-<pid>-<counter>-<random>"
  static std::string uniqueName(const char* kind);

  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  bool mapped() const { return data_ != nullptr; }
  void reset();

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace strata
