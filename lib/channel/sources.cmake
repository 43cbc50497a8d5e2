# Sources of lib/channel (the control channel: protocol, keys, CURVE/ZAP, hub, agent,
# client RPC).
sia_module(channel
  channel/protocol.cpp
  channel/identity.cpp
  channel/keys.cpp
  channel/allow_list.cpp
  channel/security.cpp
  channel/ipc_trust.cpp
  channel/zap_handler.cpp
  channel/lease.cpp
  channel/lease_memory.cpp
  channel/hub.cpp
  channel/hub_leases.cpp
  channel/sia_run_node.cpp
  channel/agent.cpp
  channel/node_logs.cpp
  channel/client_rpc.cpp
)
target_link_libraries(sia_channel
  PUBLIC sia_cli sia_core sia_exec sia_os cppzmq)
