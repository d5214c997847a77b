"""A read-only sequence of one item per rank, each made on access (used by every layer that
must present per-rank values without holding one object per rank: ``workload.micro``'s
replicated graphs, ``system.result``'s uniform rank results)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar, overload

T = TypeVar("T")


class PerRank(Sequence[T]):
    """``npus`` items; item ``i`` is ``self.item(i)``, built when asked for."""

    __slots__ = ("npus",)

    def __init__(self, npus: int) -> None:
        self.npus = npus

    def item(self, rank: int) -> T:
        raise NotImplementedError

    def __len__(self) -> int:
        return self.npus

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self.item(i) for i in range(*index.indices(self.npus))]
        if index < 0:
            index += self.npus
        if not 0 <= index < self.npus:
            raise IndexError(f"rank {index} out of range (0..{self.npus - 1})")
        return self.item(index)

    def __iter__(self) -> Iterator[T]:
        for rank in range(self.npus):
            yield self.item(rank)
