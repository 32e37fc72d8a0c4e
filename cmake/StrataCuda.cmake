# CUDA detection: STRATA_ENABLE_CUDA=AUTO enables the CUDA language when nvcc is found (on PATH or
# in /usr/local/cuda), ON requires it, OFF skips it. Sets STRATA_HAVE_CUDA and, for the perf
# tool's baseline, STRATA_HAVE_NCCL.
#
# STRATA_CUDA_SIM=ON builds the same CUDA sources against the CUDA simulator instead
# (tests/cuda_sim): only CUDA's headers are needed, the .cu files compile as C++ with the host
# compiler, and libstrata_cuda_sim takes libcudart's place.
#
# Either way the rest of the build names two things only: `strata_cuda_runtime` (link it where
# CUDA's runtime is called) and strata_cuda_sources(target ...) (add .cu files to a target).
set(STRATA_HAVE_CUDA OFF)
set(STRATA_HAVE_NCCL OFF)
add_library(strata_cuda_runtime INTERFACE)

function(strata_cuda_sources target)
  target_sources(${target} PRIVATE ${ARGN})
  if(STRATA_CUDA_SIM)
    # At -O2, not the build type's -O3: the simulated kernels' vector loops, inlined for every type,
    # operator and alignment: the three family files took 204 s of the host compiler at -O3 against
    # 140 s at -O2, and the simulated tests ran as fast (their time is the simulator's threads).
    set_source_files_properties(${ARGN} TARGET_DIRECTORY ${target} PROPERTIES LANGUAGE CXX COMPILE_OPTIONS "-xc++;-Wno-unknown-pragmas;-O2")
  endif()
endfunction()

if(STRATA_CUDA_SIM)
  find_package(CUDAToolkit REQUIRED)  # the headers; nothing of CUDA's is linked
  set(STRATA_HAVE_CUDA ON)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/cuda_sim ${PROJECT_BINARY_DIR}/cuda_sim)
  target_link_libraries(strata_cuda_runtime INTERFACE strata_cuda_sim)
  target_compile_definitions(strata_cuda_runtime INTERFACE STRATA_CUDA_SIM=1)
elseif(NOT STRATA_ENABLE_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(STRATA_NVCC nvcc HINTS /usr/local/cuda/bin ENV CUDA_HOME PATH_SUFFIXES bin)
    if(STRATA_NVCC)
      set(CMAKE_CUDA_COMPILER ${STRATA_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_ARCHITECTURES ${STRATA_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    # Device code is C++17: CMake 3.25 does not know nvcc's C++20 flag.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(STRATA_HAVE_CUDA ON)
    target_link_libraries(strata_cuda_runtime INTERFACE CUDA::cudart)
  elseif(STRATA_ENABLE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "STRATA_ENABLE_CUDA=ON but no CUDA compiler was found (set CMAKE_CUDA_COMPILER)")
  endif()
endif()

if(STRATA_HAVE_CUDA AND NOT STRATA_CUDA_SIM AND NOT STRATA_ENABLE_NCCL STREQUAL "OFF")
  find_path(STRATA_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
  find_library(STRATA_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME PATH_SUFFIXES lib lib64)
  if(STRATA_NCCL_INCLUDE_DIR AND STRATA_NCCL_LIBRARY)
    set(STRATA_HAVE_NCCL ON)
    add_library(strata_nccl INTERFACE)
    target_include_directories(strata_nccl INTERFACE ${STRATA_NCCL_INCLUDE_DIR})
    target_link_libraries(strata_nccl INTERFACE ${STRATA_NCCL_LIBRARY})
  elseif(STRATA_ENABLE_NCCL STREQUAL "ON")
    message(FATAL_ERROR "STRATA_ENABLE_NCCL=ON but nccl.h / libnccl were not found (set NCCL_HOME)")
  endif()
endif()
