"""A small thread-safe LRU cache: the plan caches of :mod:`pfft.mesh_plan` and :mod:`pfft.mpi`,
and :data:`pfft.forward_record.FORWARDS`."""
from __future__ import annotations

import collections
import threading
from typing import Callable, Hashable, TypeVar

__all__ = ["LRUCache"]

V = TypeVar("V")


class LRUCache:
    """At most ``maxsize`` values; the least recently used goes first. Thread-safe."""

    def __init__(self, maxsize: int):
        self.maxsize = maxsize
        self._data: collections.OrderedDict = collections.OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get_or_make(self, key: Hashable, make: Callable[[], V]) -> V:
        """The value cached for ``key``, made with ``make()`` on a miss (under the lock)."""
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                self.hits += 1
                return self._data[key]
            self.misses += 1
            value = self._data[key] = make()
            self._evict()
            return value

    def put(self, key: Hashable, value) -> None:
        """Store ``value`` under ``key`` as the most recently used."""
        with self._lock:
            self._data[key] = value
            self._data.move_to_end(key)
            self._evict()

    def get(self, key: Hashable, default=None):
        """The value stored under ``key`` (``default`` if none); counts as a use."""
        with self._lock:
            if key not in self._data:
                return default
            self._data.move_to_end(key)
            return self._data[key]

    def values(self) -> list:
        """A snapshot of the cached values, oldest first."""
        with self._lock:
            return list(self._data.values())

    def info(self) -> dict:
        """Hits, misses, current size and maximum size."""
        with self._lock:
            return {"hits": self.hits, "misses": self.misses, "size": len(self._data),
                    "maxsize": self.maxsize}

    def resize(self, maxsize: int) -> None:
        """Bound the cache to ``maxsize`` values, dropping the oldest beyond it."""
        with self._lock:
            self.maxsize = maxsize
            self._evict()

    def clear(self) -> None:
        """Forget every value."""
        with self._lock:
            self._data.clear()

    def _evict(self) -> None:
        while len(self._data) > self.maxsize:
            self._data.popitem(last=False)
