// Checks pfft::LruCache (lru_cache.h), the cache that holds the GPU kernel's cuFFT
// plans, on the CPU: the bound and the LRU order, values outliving their eviction
// while held, memory that stays flat over thousands of keys, and concurrent use from
// threads (built with -fsanitize=thread when the compiler has it, so a data race
// fails the run). Exit status 0 when every check holds. Run by tests/test_engines.py.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "lru_cache.h"

namespace {

std::atomic<long> live{0};  // values alive now

struct Value {
  explicit Value(int k) : key(k) { ++live; }
  ~Value() { --live; }
  int key;
};

int failures = 0;
#define CHECK(cond)                                                        \
  do {                                                                     \
    if (!(cond)) {                                                         \
      std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                          \
    }                                                                      \
  } while (0)

using Cache = pfft::LruCache<int, Value>;

std::shared_ptr<Value> GetOrMake(Cache &c, int key) {
  auto v = c.Get(key);
  return v ? v : c.Put(key, std::make_shared<Value>(key));
}

void BoundAndOrder() {
  Cache c(3);
  for (int k : {1, 2, 3}) GetOrMake(c, k);
  CHECK(c.Get(1));              // 1 is now the most recent: 2 is the oldest
  GetOrMake(c, 4);
  CHECK(c.size() == 3);
  CHECK(!c.Get(2) && c.Get(1) && c.Get(3) && c.Get(4));
  CHECK(live == 3);
  auto first = c.Put(4, std::make_shared<Value>(40));  // a racing maker loses:
  CHECK(first->key == 4 && c.Get(4)->key == 4);        // the cached one is kept
  c.set_limit(1);
  CHECK(c.size() == 1 && c.limit() == 1 && c.Get(4));
  c.set_limit(0);                                      // clamped to one
  CHECK(c.limit() == 1);
  first.reset();
  c.clear();
  CHECK(c.size() == 0 && live == 0);
}

void HeldValuesOutliveEviction() {
  Cache c(2);
  auto held = GetOrMake(c, 7);
  for (int k = 0; k < 5; ++k) GetOrMake(c, k);  // 7 is evicted
  CHECK(!c.Get(7) && held->key == 7);          // and still alive for its holder
  CHECK(live == 3);
  held.reset();
  CHECK(live == 2);
  c.clear();
}

void FlatOverThousandsOfKeys() {
  Cache c(16);
  long peak = 0;
  for (int k = 0; k < 20000; ++k) {
    auto v = GetOrMake(c, k);
    CHECK(v->key == k);
    peak = std::max(peak, live.load());
  }
  CHECK(c.size() == 16 && peak <= 17 && live == 16);
  c.clear();
  CHECK(live == 0);
}

void Threads() {
  Cache c(8);
  std::atomic<bool> wrong{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&c, &wrong, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 20000; ++i) {
        int key = static_cast<int>(rng() % 64);
        auto v = GetOrMake(c, key);
        if (!v || v->key != key) wrong = true;
        if (t == 0 && i % 1000 == 0) c.set_limit(4 + (i / 1000) % 8);
      }
    });
  }
  for (auto &th : threads) th.join();
  CHECK(!wrong);
  CHECK(c.size() <= c.limit() && live == static_cast<long>(c.size()));
  c.clear();
  CHECK(live == 0);
}

}  // namespace

int main() {
  BoundAndOrder();
  HeldValuesOutliveEviction();
  FlatOverThousandsOfKeys();
  Threads();
  if (failures) {
    std::fprintf(stderr, "%d check(s) failed\n", failures);
    return 1;
  }
#if defined(__SANITIZE_THREAD__)
  std::printf("lru_cache: all checks hold (under ThreadSanitizer)\n");
#else
  std::printf("lru_cache: all checks hold (ThreadSanitizer unavailable here)\n");
#endif
  return 0;
}
