# Sources of lib/cli: what every program shares (output formats, tables, version, signals). Uses core.
sia_module(cli
  cli/tool.cpp
  cli/table.cpp
  cli/heap_hint.cpp
  cli/stop_signals.cpp
)
target_link_libraries(sia_cli
  PUBLIC sia_core
  PRIVATE sia_glpk cppzmq)
target_compile_definitions(sia_cli PRIVATE SIA_VERSION="${PROJECT_VERSION}")
if(SIA_HAVE_CUDA)
  target_compile_definitions(sia_cli PRIVATE SIA_CUDA_VERSION="${CUDAToolkit_VERSION}")
endif()
if(SIA_HAVE_NCCL)
  file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h _nccl_ver REGEX "^#define NCCL_(MAJOR|MINOR|PATCH) ")
  string(REGEX REPLACE ".*NCCL_MAJOR ([0-9]+).*NCCL_MINOR ([0-9]+).*NCCL_PATCH ([0-9]+).*"
         "\\1.\\2.\\3" SIA_NCCL_VERSION "${_nccl_ver}")
  target_compile_definitions(sia_cli PRIVATE SIA_NCCL_VERSION="${SIA_NCCL_VERSION}")
endif()
