# Sources of lib/worker (the reference training worker).
sia_module(worker
  worker/worker_env.cpp
  worker/dataset.cpp
  worker/mlp.cpp
  worker/grad_stats.cpp
  worker/checkpoint.cpp
  worker/tcp_comm.cpp
  worker/cpu_backend.cpp
  worker/cuda_plugin.cpp
  worker/report_sink.cpp
  worker/batch_plan.cpp
  worker/stop_signal.cpp
  worker/trainer.cpp
  worker/subprocess.cpp
  worker/live_profile.cpp
)
target_link_libraries(sia_worker
  PUBLIC sia_core
  PRIVATE sia_os cppzmq ${CMAKE_DL_LIBS})
set_property(SOURCE worker/cuda_plugin.cpp APPEND PROPERTY COMPILE_DEFINITIONS
  SIA_WORKER_PLUGIN_DIR="${CMAKE_INSTALL_FULL_LIBDIR}/sia")

# The CUDA + NCCL backend: a plugin that sia-worker loads at run time (worker/cuda_plugin.hpp),
# built only when CUDA, a working nvcc and NCCL are found, so the default build never needs
# them. -DSIA_ENABLE_CUDA=OFF skips it.
if(SIA_HAVE_CUDA AND SIA_HAVE_NCCL)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    enable_language(CUDA)
    add_library(sia_worker_cuda MODULE worker/cuda/cuda_backend.cpp worker/cuda/kernels.cu)
    target_include_directories(sia_worker_cuda PRIVATE
      ${CMAKE_CURRENT_SOURCE_DIR} ${NCCL_INCLUDE_DIR})
    target_link_libraries(sia_worker_cuda PRIVATE
      CUDA::cudart CUDA::cublas ${NCCL_LIBRARY})
    set_target_properties(sia_worker_cuda PROPERTIES
      CXX_VISIBILITY_PRESET hidden
      CUDA_VISIBILITY_PRESET hidden
      CUDA_STANDARD 17
      LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib/sia)
    install(TARGETS sia_worker_cuda LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/sia)
    message(STATUS "sia: CUDA worker backend (nvcc ${CMAKE_CUDA_COMPILER_VERSION})")
  else()
    message(STATUS "sia: no usable nvcc: the CUDA worker backend is not built")
  endif()
endif()
