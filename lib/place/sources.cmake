# Sources of lib/place: the placer (allocations to nodes). Uses core.
sia_module(place
  place/placer.cpp
)
target_link_libraries(sia_place
  PUBLIC sia_core)
