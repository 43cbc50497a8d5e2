# Sources of lib/os (the operating-system layer: starting and waiting for processes, lock
# files, directories, the clock), added to libsia. lib/os depends on lib/core only.
target_sources(sia PRIVATE
  os/clock.cpp
  os/process_exit.cpp
  os/spawn.cpp
  os/run_process.cpp
  os/make_dirs.cpp
  os/lock_file.cpp
)
