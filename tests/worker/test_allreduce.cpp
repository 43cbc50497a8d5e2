#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "fork_ranks.hpp"
#include "worker/exit_codes.hpp"
#include "worker/tcp_comm.hpp"

using namespace sia;
using namespace sia::worker;

static TcpCommConfig config(int rank, int world, int port) {
  TcpCommConfig c;
  c.rank = rank;
  c.world_size = world;
  c.master_port = port;
  c.job = "t";
  c.round = 3;
  c.rendezvous_timeout = 20;
  c.peer_timeout = 20;
  return c;
}

TEST_CASE("all-reduce sums across 1 to 4 processes", "[worker][allreduce]") {
  for (int world = 1; world <= 4; ++world) {
    const int port = test::free_port();
    auto statuses = test::fork_ranks(world, [&](int rank) {
      auto comm = TcpComm::connect(config(rank, world, port));
      if (comm->rank() != rank || comm->size() != world) return 1;
      // Doubles: element i of rank r is (r + 1) * (i + 1) + 0.25; large enough to need
      // several TCP segments.
      const std::size_t n = 100000;
      std::vector<double> d(n);
      for (std::size_t i = 0; i < n; ++i) d[i] = (rank + 1.0) * (i + 1.0) + 0.25;
      comm->allreduce_sum(d.data(), n);
      const double ranks = world * (world + 1) / 2.0;
      for (std::size_t i = 0; i < n; ++i) {
        if (d[i] != ranks * (i + 1.0) + 0.25 * world) return 2;
      }
      std::vector<float> f = {1.5f * rank, -1.0f, 0.0f};
      comm->allreduce_sum(f.data(), f.size());
      if (f[0] != 1.5f * (ranks - world) || f[1] != -1.0f * world || f[2] != 0.0f) return 3;
      std::string s = rank == 0 ? std::string("hello from rank 0") : std::string("x");
      comm->broadcast(s);
      if (s != "hello from rank 0") return 4;
      // Repeated operations stay in step.
      for (int k = 0; k < 50; ++k) {
        double v = rank == world - 1 ? k : 0;
        comm->allreduce_sum(&v, 1);
        if (v != k) return 5;
      }
      return 0;
    });
    INFO("world size " << world);
    CHECK(statuses == std::vector<int>(static_cast<std::size_t>(world), 0));
  }
}

TEST_CASE("a worker of another round is turned away", "[worker][allreduce]") {
  const int port = test::free_port();
  auto statuses = test::fork_ranks(2, [&](int rank) {
    TcpCommConfig c = config(rank, 2, port);
    c.rendezvous_timeout = 1.5;
    if (rank == 1) c.round = 2;  // a straggler from the previous generation
    TcpComm::connect(c);
    return 0;
  });
  CHECK(statuses[0] == to_int(kPeerLost));
  CHECK(statuses[1] == to_int(kPeerLost));
}

TEST_CASE("a peer that exits fails the collective with status 69", "[worker][allreduce]") {
  const int port = test::free_port();
  auto statuses = test::fork_ranks(3, [&](int rank) {
    auto comm = TcpComm::connect(config(rank, 3, port));
    if (rank == 2) return 0;  // gone before the all-reduce
    double v = 1;
    comm->allreduce_sum(&v, 1);
    return 0;
  });
  CHECK(statuses[0] == to_int(kPeerLost));
  CHECK(statuses[2] == 0);
  // Rank 1 either sees rank 0 go away (69) or was answered before that.
  CHECK((statuses[1] == to_int(kPeerLost) || statuses[1] == 0));
}

TEST_CASE("a SIGTERM during the rendezvous ends it with status 75", "[worker][allreduce]") {
  const int port = test::free_port();
  auto statuses = test::fork_ranks(1, [&](int) {
    TcpCommConfig c = config(0, 2, port);  // rank 1 never comes
    int polls = 0;
    c.stop = [&] { return ++polls > 3; };
    TcpComm::connect(c);
    return 0;
  });
  CHECK(statuses[0] == to_int(kPreempted));
}
