"""A read-only sequence whose items are made on access (used by every layer that must present
per-rank values without holding one object per rank: ``workload.micro``'s replicated graphs,
``system.result``'s uniform rank results and collective records)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """``length`` items; item ``i`` is ``self.item(i)``, built when asked for."""

    __slots__ = ("length",)

    def __init__(self, length: int) -> None:
        self.length = length

    def item(self, index: int) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.length

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self.item(i) for i in range(*index.indices(self.length))]
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError(f"index {index} out of range (0..{self.length - 1})")
        return self.item(index)

    def __iter__(self) -> Iterator[T]:
        for index in range(self.length):
            yield self.item(index)
