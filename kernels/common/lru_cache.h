// A bounded, thread-safe least-recently-used cache of shared values.
//
// Used for the GPU kernel's cuFFT plans (kernels/cuda/pfft_cuda.cu) and tested on
// its own, with threads, by kernels/common/lru_cache_test.cc (tests/test_engines.py).
//
//   LruCache<Key, Value> cache(limit);
//   std::shared_ptr<Value> v = cache.Get(key);            // nullptr when absent
//   v = cache.Put(key, std::make_shared<Value>(...));       // the cached one if a
//                                                           // racing thread put first
//
// At most `limit` values stay cached; putting one more evicts the least recently used
// (Get and Put both count as use). An evicted value that a caller still holds lives
// until the caller drops it (shared_ptr), so eviction never pulls a value from under
// a running call. Values are made outside the lock: slow constructors (cuFFT plans)
// do not serialise callers that want other keys. Key needs operator<.
#pragma once

#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

namespace pfft {

template <class Key, class Value>
class LruCache {
 public:
  explicit LruCache(size_t limit) : limit_(limit > 0 ? limit : 1) {}

  std::shared_ptr<Value> Get(const Key &key) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it == map_.end()) return nullptr;
    ages_.splice(ages_.begin(), ages_, it->second.age);  // now the most recent
    return it->second.value;
  }

  std::shared_ptr<Value> Put(const Key &key, std::shared_ptr<Value> value) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.find(key);
    if (it != map_.end()) {  // another thread made it first: keep one
      ages_.splice(ages_.begin(), ages_, it->second.age);
      return it->second.value;
    }
    ages_.push_front(key);
    map_.emplace(key, Entry{value, ages_.begin()});
    EvictLocked();
    return value;
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return map_.size();
  }
  size_t limit() const {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }
  void set_limit(size_t limit) {
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = limit > 0 ? limit : 1;
    EvictLocked();
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu_);
    map_.clear();
    ages_.clear();
  }

 private:
  struct Entry {
    std::shared_ptr<Value> value;
    typename std::list<Key>::iterator age;
  };
  void EvictLocked() {
    while (map_.size() > limit_ && !ages_.empty()) {
      map_.erase(ages_.back());
      ages_.pop_back();
    }
  }

  mutable std::mutex mu_;
  size_t limit_;
  std::map<Key, Entry> map_;
  std::list<Key> ages_;  // most recently used first
};

}  // namespace pfft
