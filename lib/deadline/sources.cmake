# Sources of lib/deadline: admission of guaranteed jobs (deadlines, issue 34) -- pure
# functions on plain values and the table read off a round's goodput row, for the
# controller and the simulator alike. Uses core.
sia_module(deadline
  deadline/admission.cpp
  deadline/row_table.cpp)
target_link_libraries(sia_deadline PUBLIC sia_core)
