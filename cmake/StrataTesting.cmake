# add_strata_mpi_test(NAME NP n COMMAND target [ARGS ...] [ENV VAR=value ...])
# Runs `target` under mpiexec with n ranks (oversubscribed where the MPI needs a flag for it),
# with a timeout, as root where the MPI needs permission for that.
set(STRATA_MPIEXEC_EXTRA_FLAGS "")
execute_process(COMMAND ${MPIEXEC_EXECUTABLE} --version OUTPUT_VARIABLE _strata_mpiexec_version ERROR_QUIET)
# Open MPI binds a job of one or two ranks to a core each, and the threads a rank starts (the
# progress thread, the CUDA simulator's streams and blocks) then share that one core: unbound, the
# simulated matrix on one rank ran in half the time.
if(_strata_mpiexec_version MATCHES "Open MPI|OpenRTE")
  set(STRATA_MPIEXEC_EXTRA_FLAGS --oversubscribe --bind-to none)
endif()

function(add_strata_mpi_test name)
  cmake_parse_arguments(T "" "NP;COMMAND;TIMEOUT" "ARGS;ENV;LABELS" ${ARGN})
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT ${STRATA_MPI_TEST_TIMEOUT})
  endif()
  add_test(NAME ${name}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${T_NP} ${STRATA_MPIEXEC_EXTRA_FLAGS}
                   ${MPIEXEC_PREFLAGS} $<TARGET_FILE:${T_COMMAND}> ${MPIEXEC_POSTFLAGS} ${T_ARGS})
  # The processors it uses: one per rank (ctest runs a test wanting more than -j alone).
  set_tests_properties(${name} PROPERTIES TIMEOUT ${T_TIMEOUT} LABELS "mpi;${T_LABELS}" PROCESSORS ${T_NP}
                       ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1;${T_ENV}")
endfunction()
