# Sources of lib/worker (the reference training worker), added to libsia.
target_sources(sia PRIVATE
)
