// Smoke mode of the benchmarks: with SIA_BENCH_SMOKE set to anything but "" or "0", every
// bench runs its smallest case only, in seconds, so that the suite keeps each one running
// (bench/smoke.sh, `ctest -L bench`). Its figures then measure nothing worth keeping.
// Thread-safety: reads the environment; call it before starting threads.
#pragma once

namespace sia::bench {

bool smoke();

}  // namespace sia::bench
