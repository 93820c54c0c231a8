"""A few values kept by key for this process, the least recently used forgotten first; thread-safe.

What is read or computed again and again with the same outcome (OCR readings of the same pixels, a module
folder's validation, a recording's index, a record screen just written as an image) is kept here, bounded, rather than in a dictionary of its own each.
It imports nothing of the product: every layer, the simulated phone too, may use it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Kept(Generic[K, V]):
    """``kept = Kept[str, bytes](16)``; ``kept.get(key)`` (None when not kept), ``kept.put(key, value)``."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)
