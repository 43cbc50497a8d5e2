# Sources of lib/deadline: admission of guaranteed jobs (deadlines, issue 34) -- pure
# functions on plain values, for the controller and the simulator alike. Uses nothing.
sia_module(deadline
  deadline/admission.cpp)
