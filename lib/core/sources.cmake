# Sources of lib/core: the formats and data types every module shares (documents, clusters, jobs,
# configurations, batch settings, allocations, CRC32, logging). Uses no other module.
sia_module(core
  core/error.cpp
  core/error_list.cpp
  core/compat.cpp
  core/node.cpp
  core/input.cpp
  core/document.cpp
  core/toml_json.cpp
  core/csv.cpp
  core/crc32.cpp
  core/log.cpp
  core/cluster.cpp
  core/configuration.cpp
  core/profile.cpp
  core/time_text.cpp
  core/job_spec.cpp
  core/app_spec.cpp
  core/run_as.cpp
  core/json_writer.cpp
  core/json_limits.cpp
  core/json_cursor.cpp
  core/job_model_info.cpp
  core/goodput_matrix.cpp
  core/goodput_matrix_reader.cpp
  core/allocation.cpp
  core/placement.cpp
  core/batch_setting.cpp
)
target_link_libraries(sia_core
  PUBLIC nlohmann_json::nlohmann_json
  PRIVATE tomlplusplus::tomlplusplus)
