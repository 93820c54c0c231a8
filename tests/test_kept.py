"""remote.kept.Kept: a bounded store, the least recently used value forgotten first."""

from __future__ import annotations

from remote.kept import Kept


def test_the_least_recently_used_goes_first_and_a_read_counts_as_use():
    kept: Kept[str, int] = Kept(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1            # "a" used again: "b" is now the oldest
    kept.put("c", 3)
    assert (kept.get("a"), kept.get("b"), kept.get("c"), len(kept)) == (1, None, 3, 2)
    kept.put("a", 4)                     # a value kept again replaces the old one, as the newest
    kept.put("d", 5)
    assert (kept.get("a"), kept.get("c"), kept.get("d")) == (4, None, 5)
    kept.clear()
    assert len(kept) == 0 and kept.get("a") is None
