// TcpComm: a Communicator over plain TCP in a star around rank 0. Rank 0 listens on
// MASTER_PORT (all interfaces, SO_REUSEADDR, retrying while the port is still held by a
// previous generation); the other ranks connect to MASTER_ADDR:MASTER_PORT, retrying until
// the rendezvous timeout, and introduce themselves with (job, round, rank, world size):
// rank 0 turns away a worker of another job, round or world size, or a duplicate rank.
// An all-reduce sends every buffer to rank 0, which adds them in rank order and sends the
// sum back -- simple and deterministic, fine for the small models of the reference worker.
// A SIGTERM that arrives during the rendezvous (`stop` returns true) ends it with status 75
// (kPreempted): nothing has been computed yet, the previous checkpoint stands.
// Thread-safety: one thread per TcpComm.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "worker/comm.hpp"

namespace sia::worker {

struct TcpCommConfig {
  int rank = 0;
  int world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 0;
  std::string job;
  long round = 0;
  double rendezvous_timeout = 300;  // seconds
  double peer_timeout = 600;        // seconds without progress on a transfer
  std::function<bool()> stop;       // polled while waiting for peers
};

class TcpComm : public Communicator {
 public:
  // Connects all ranks (returns at once for a world of one).
  static std::unique_ptr<TcpComm> connect(const TcpCommConfig& config);
  ~TcpComm() override;
  TcpComm(const TcpComm&) = delete;
  TcpComm& operator=(const TcpComm&) = delete;

  int rank() const override { return config_.rank; }
  int size() const override { return config_.world_size; }
  void allreduce_sum(double* data, std::size_t n) override;
  void allreduce_sum(float* data, std::size_t n) override;
  void broadcast(std::string& bytes) override;

 private:
  explicit TcpComm(const TcpCommConfig& config) : config_(config) {}
  void rendezvous_root();
  void rendezvous_peer();
  template <typename T>
  void allreduce(T* data, std::size_t n);

  TcpCommConfig config_;
  std::vector<int> peers_;  // rank 0: socket of rank r at r (index 0 unused); others: [0]
};

}  // namespace sia::worker
