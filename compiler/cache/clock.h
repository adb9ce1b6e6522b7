// An injectable clock, so tests control time (LRU order, durations).
#ifndef TILEC_COMPILER_CACHE_CLOCK_H_
#define TILEC_COMPILER_CACHE_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace tilec::cache {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() = 0;
};

class RealClock : public Clock {
 public:
  absl::Time Now() override { return absl::Now(); }
  // A process-wide instance.
  static Clock* Get() {
    static RealClock clock;
    return &clock;
  }
};

}  // namespace tilec::cache

#endif  // TILEC_COMPILER_CACHE_CLOCK_H_
