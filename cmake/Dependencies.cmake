# Finds the Debian packages sia builds against and gives each an imported target.
# See scripts/setup.sh for the package names. CUDA and NCCL are optional.
find_package(PkgConfig REQUIRED)
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(cppzmq CONFIG REQUIRED)
find_package(NLopt CONFIG REQUIRED)
find_package(Qhull CONFIG REQUIRED)

# GLPK ships neither a CMake config nor a pkg-config file.
find_path(GLPK_INCLUDE_DIR glpk.h REQUIRED)
find_library(GLPK_LIBRARY glpk REQUIRED)
add_library(sia_glpk INTERFACE IMPORTED)
target_include_directories(sia_glpk INTERFACE ${GLPK_INCLUDE_DIR})
target_link_libraries(sia_glpk INTERFACE ${GLPK_LIBRARY})

pkg_check_modules(LIBZMQ REQUIRED IMPORTED_TARGET libzmq)

set(SIA_HAVE_CUDA OFF)
set(SIA_HAVE_NCCL OFF)
if(SIA_ENABLE_CUDA)
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    set(SIA_HAVE_CUDA ON)
    find_path(NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR})
    if(NCCL_INCLUDE_DIR AND NCCL_LIBRARY)
      set(SIA_HAVE_NCCL ON)
    endif()
  endif()
endif()
message(STATUS "sia: CUDA ${SIA_HAVE_CUDA}, NCCL ${SIA_HAVE_NCCL}")
