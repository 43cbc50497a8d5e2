# Sources of lib/model: performance and goodput models, the model catalog, the estimator. Uses core.
sia_module(model
  model/perf_model.cpp
  model/goodput.cpp
  model/batch_candidates.cpp
  model/fit.cpp
  model/catalog.cpp
  model/artifact_import.cpp
  model/job_state.cpp
  model/estimator_quirks.cpp
  model/estimator.cpp
  model/shared_profiles.cpp
  model/accuracy.cpp
)
target_link_libraries(sia_model
  PUBLIC sia_core
  PRIVATE NLopt::nlopt)
target_compile_definitions(sia_model PRIVATE
  SIA_SOURCE_DATA_DIR="${SIA_SOURCE_DATA_DIR}"
  SIA_INSTALL_DATA_DIR="${SIA_INSTALL_DATA_DIR}")
