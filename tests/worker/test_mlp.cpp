#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "worker/dataset.hpp"
#include "worker/mlp.hpp"

using namespace sia::worker;

TEST_CASE("the parameter layout", "[worker][mlp]") {
  MlpShape s{3, 4, 2, 5};
  CHECK(s.depth() == 3);
  CHECK(s.weights_offset(0) == 0);
  CHECK(s.bias_offset(0) == 12);
  CHECK(s.weights_offset(1) == 16);
  CHECK(s.bias_offset(1) == 32);
  CHECK(s.weights_offset(2) == 36);
  CHECK(s.param_count() == 36 + 20 + 5);
  MlpShape logistic{3, 4, 0, 5};
  CHECK(logistic.param_count() == 3 * 5 + 5);
}

TEST_CASE("gradients match finite differences", "[worker][mlp]") {
  for (int layers : {0, 2}) {
    MlpShape s{5, 6, layers, 3};
    DatasetConfig c;
    c.features = 5;
    c.classes = 3;
    c.size = 64;
    SyntheticDataset d(c);
    const int n = 7;
    std::vector<float> x(static_cast<std::size_t>(n) * 5);
    std::vector<std::int32_t> y(n);
    d.gather(0, n, x.data(), y.data());
    std::vector<float> p = init_params(s, 3);
    // Non-zero biases: no ReLU input sits exactly on the kink at 0.
    for (std::size_t i = 0; i < p.size(); ++i) p[i] += 0.01f * static_cast<float>(1 + i % 5);
    std::vector<float> g(p.size());
    MlpCpu mlp(s);
    const double loss = mlp.loss_and_gradient(p.data(), x.data(), y.data(), n, g.data());
    CHECK(loss == Approx(mlp.loss(p.data(), x.data(), y.data(), n)));
    for (std::size_t i = 0; i < p.size(); i += 3) {
      const float h = 1e-3f;
      std::vector<float> q = p;
      q[i] = p[i] + h;
      const double up = mlp.loss(q.data(), x.data(), y.data(), n);
      q[i] = p[i] - h;
      const double down = mlp.loss(q.data(), x.data(), y.data(), n);
      INFO("layers " << layers << ", parameter " << i);
      CHECK(g[i] == Approx((up - down) / (2 * h)).margin(2e-3));
    }
  }
}

TEST_CASE("the initial loss is about log(classes)", "[worker][mlp]") {
  MlpShape s;
  DatasetConfig c;
  SyntheticDataset d(c);
  std::vector<float> x(256 * 32);
  std::vector<std::int32_t> y(256);
  d.gather(0, 256, x.data(), y.data());
  std::vector<float> p = init_params(s, 1);
  MlpCpu mlp(s);
  const double loss = mlp.loss(p.data(), x.data(), y.data(), 256);
  CHECK(loss > 1.5);
  CHECK(loss < 4.0);
  CHECK(training_bytes(s, 64) > training_bytes(s, 32));
}
