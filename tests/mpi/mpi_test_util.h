// Helpers of the MPI tests: communicators per (node shape, forced algorithm), cross-rank agreement
// on failures, and the reference oracle.
#pragma once

#include <gtest/gtest.h>
#include <mpi.h>
#include <strata/strata.h>

#include <cstdint>
#include <string>
#include <vector>

#include "perf/reference.h"

namespace strata::test {

int worldRank();
int worldSize();

// A communicator over MPI_COMM_WORLD with virtual nodes `shape` ("0": discover, "4": nodes of 4
// ranks, "3,5": explicit sizes) and `algorithm` forced ("" for the tuner). Created once, reused.
strataComm_t commFor(const std::string& shape, const std::string& algorithm);
void releaseComms();
// Node shapes worth testing on p ranks.
std::vector<std::string> shapesFor(int p);

// Collective agreement: true on every rank when `localOk` holds on every rank.
bool allRanksOk(bool localOk);

}  // namespace strata::test
