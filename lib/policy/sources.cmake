# Sources of lib/policy: the scheduling policies (Sia, Gavel, Pollux, Themis) and the MCKP solver.
# Uses core, model and place.
sia_module(policy
  policy/glpk_limits.cpp
  policy/mckp.cpp
  policy/mckp_lagrangian.cpp
  policy/mckp_dp.cpp
  policy/mckp_core.cpp
  policy/mckp_glpk.cpp
  policy/policy.cpp
  policy/knobs.cpp
  policy/policy_quirks.cpp
  policy/sia_policy.cpp
  policy/explain.cpp
  policy/gavel.cpp
  policy/gavel_common.cpp
  policy/gavel_lp.cpp
  policy/interior_point.cpp
  policy/pollux.cpp
  policy/pollux_ga.cpp
  policy/themis.cpp
  policy/themis_auction.cpp
  policy/themis_model.cpp
  policy/themis_state.cpp
  policy/successive_halving.cpp
  policy/themis_app.cpp
  policy/fairness_estimate.cpp
  policy/deadline_rows.cpp
  policy/elasticflow.cpp
)
target_link_libraries(sia_policy
  PUBLIC sia_core sia_model sia_place
  PRIVATE sia_glpk)
