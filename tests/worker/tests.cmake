# Unit tests of lib/worker (sia_test is defined in tests/CMakeLists.txt).
sia_test(worker
  worker/test_worker_env.cpp
  worker/test_allreduce.cpp
  worker/test_grad_stats.cpp
  worker/test_checkpoint.cpp
  worker/test_dataset.cpp
  worker/test_mlp.cpp
  worker/test_trainer.cpp
  worker/test_report_sink.cpp
  worker/test_subprocess.cpp
  worker/test_batch_plan.cpp)

# The CUDA + NCCL backend (a plugin, built only with CUDA, nvcc and NCCL): skipped (77)
# where no GPU is visible.
if(TARGET sia_worker_cuda)
  add_executable(test_worker_cuda worker/test_cuda_backend.cpp)
  target_link_libraries(test_worker_cuda PRIVATE sia)
  target_include_directories(test_worker_cuda PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  add_dependencies(test_worker_cuda sia_worker_cuda)
  add_test(NAME worker/cuda COMMAND test_worker_cuda)
  set_tests_properties(worker/cuda PROPERTIES SKIP_RETURN_CODE 77
                       ENVIRONMENT "NCCL_SOCKET_IFNAME=lo")
endif()
