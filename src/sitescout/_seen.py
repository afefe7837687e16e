"""A compact seen-set for de-duplicating a whole walk (§5, §14).

A Python `set` of URL strings costs about 150 bytes per URL (string object plus table slot); at
10M URLs that is gigabytes. This keeps only a 64-bit hash per URL in an open-addressing table held
in one `array('q')`: 12–24 bytes per URL (load factor 1/3 to 2/3), no per-URL object. Two distinct
URLs sharing a 64-bit hash would make the second look seen; at 10M URLs the odds are about 1 in
300,000 per walk, which an inventory tool can accept.
"""

from __future__ import annotations

from array import array


class SeenSet:
    __slots__ = ("_count", "_limit", "_mask", "_table")

    def __init__(self, capacity: int = 1 << 14) -> None:
        size = 1
        while size * 2 < capacity * 3:
            size <<= 1
        self._table = array("q", bytes(8 * size))
        self._mask = size - 1
        self._limit = size * 2 // 3
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def add(self, key: str) -> bool:
        """Insert `key`; True when it was not there before."""
        h = hash(key) or 1  # 0 marks an empty slot
        table = self._table
        mask = self._mask
        i = h & mask
        while True:
            v = table[i]
            if v == 0:
                table[i] = h
                self._count += 1
                if self._count > self._limit:
                    self._grow()
                return True
            if v == h:
                return False
            i = (i + 1) & mask

    def __contains__(self, key: object) -> bool:
        h = hash(key) or 1
        table, mask = self._table, self._mask
        i = h & mask
        while True:
            v = table[i]
            if v == 0:
                return False
            if v == h:
                return True
            i = (i + 1) & mask

    @property
    def nbytes(self) -> int:
        return self._table.itemsize * len(self._table)

    def _grow(self) -> None:
        old = self._table
        size = len(old) * 2
        table = array("q", bytes(8 * size))
        mask = size - 1
        for h in old:
            if h:
                i = h & mask
                while table[i]:
                    i = (i + 1) & mask
                table[i] = h
        self._table, self._mask, self._limit = table, mask, size * 2 // 3
