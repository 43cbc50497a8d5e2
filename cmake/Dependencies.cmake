# Finds the Debian packages sia builds against and gives each an imported target.
# See scripts/setup.sh for the package names. CUDA and NCCL are optional.
find_package(CLI11 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(tomlplusplus REQUIRED)
# cppzmq's target `cppzmq` (zmq.hpp) brings libzmq with it. Not pkg_check_modules(libzmq
# IMPORTED_TARGET): Debian's libzmq.pc has `-isystem /usr/include/mit-krb5` in its Cflags,
# which CMake's FindPkgConfig makes an include directory on the first configure of a build
# folder and a compile option on every later one, so the second configure changed the flags
# of everything that links ZeroMQ and the next build recompiled most of the tree.
find_package(cppzmq CONFIG REQUIRED)
find_package(NLopt CONFIG REQUIRED)
find_package(Qhull CONFIG REQUIRED)

# GLPK ships neither a CMake config nor a pkg-config file.
find_path(GLPK_INCLUDE_DIR glpk.h REQUIRED)
find_library(GLPK_LIBRARY glpk REQUIRED)
add_library(sia_glpk INTERFACE IMPORTED)
target_include_directories(sia_glpk INTERFACE ${GLPK_INCLUDE_DIR})
target_link_libraries(sia_glpk INTERFACE ${GLPK_LIBRARY})

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
