# Sources of lib/exec (process supervision), added to libsia.
target_sources(sia PRIVATE
)
