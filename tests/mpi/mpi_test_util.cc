#include "tests/mpi/mpi_test_util.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>


namespace strata::test {

int worldRank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}
int worldSize() {
  int s = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

namespace {
std::map<std::string, strataComm_t>& comms() {
  static std::map<std::string, strataComm_t> m;
  return m;
}
}  // namespace

strataComm_t commFor(const std::string& shape, const std::string& algorithm) {
  const std::string key = shape + "|" + algorithm;
  auto it = comms().find(key);
  if (it != comms().end()) return it->second;
  // The node shape goes through the environment: it accepts lists ("3,5") the config field does not.
  setenv("STRATA_RANKS_PER_NODE", shape.c_str(), 1);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.algorithm = algorithm.empty() ? nullptr : algorithm.c_str();
  config.timeoutSeconds = 120;
  strataComm_t comm = nullptr;
  const strataResult_t rc = strataCommInitMpi(&comm, MPI_COMM_WORLD, &config);
  unsetenv("STRATA_RANKS_PER_NODE");
  if (rc != strataSuccess) {
    ADD_FAILURE() << "strataCommInitMpi(shape " << shape << ", algorithm " << algorithm
                  << ") failed: " << strataGetLastError(nullptr);
    return nullptr;
  }
  comms()[key] = comm;
  return comm;
}

void releaseComms() {
  for (auto& [key, comm] : comms()) strataCommDestroy(comm);
  comms().clear();
}

std::vector<std::string> shapesFor(int p) {
  std::vector<std::string> s = {"0"};
  if (p > 1) s.push_back("1");
  if (p >= 4 && p % 2 == 0) s.push_back(std::to_string(p / 2));
  if (p == 8) {
    s.push_back("2");
    s.push_back("3,5");
  }
  if (p == 5) s.push_back("3");
  return s;
}

bool allRanksOk(bool localOk) {
  int ok = localOk ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

}  // namespace strata::test
