# Sources of lib/os (the operating-system layer: starting and waiting for processes, lock
# files, directories, the clock; safe opens in directories another user owns and removals
# in them, atomic writes, the checkpoint directory's shared files). lib/os depends on lib/core only.
sia_module(os
  os/clock.cpp
  os/process_exit.cpp
  os/account.cpp
  os/spawn.cpp
  os/run_process.cpp
  os/make_dirs.cpp
  os/random_text.cpp
  os/safe_open.cpp
  os/remove_tree.cpp
  os/atomic_file.cpp
  os/checkpoint_dir.cpp
  os/lock_file.cpp
)
target_link_libraries(sia_os
  PRIVATE sia_core)
