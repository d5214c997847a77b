"""Inter-dimension scheduling: the order in which a chunk visits the logical dimensions.

- ``baseline``: ascending (astra-sim-semantics.md E1-E3), all-gather descending.
- ``roundRobin``: the baseline order rotated by a per-rank counter bumped per chunk
  (ASTRA-sim's ``round_robin_inter_dimension_scheduler``).
- ``themis``: Themis' greedy (arXiv 2110.04478 §4.2, Algorithm 1; ASTRA-sim's
  ``OfflineGreedy``). Each dimension keeps its accumulated load in seconds since the start of
  the collective: a reduce-scatter (or all-reduce) of ``b`` bytes on a dimension of ``n``
  members and per-link bandwidth ``B`` adds ``b (n-1)/n / B`` and passes ``b / n`` on; an
  all-gather of input ``b`` adds ``b (n-1) / B`` and passes ``b n`` on. For each chunk the
  dimensions are sorted by load (ascending for reduce-scatter / all-reduce, so the least
  loaded dimension carries the largest share; descending for all-gather); the sort is stable
  on the previous order, as the persistent list ASTRA-sim sorts in place. When the load gap
  between the most and least loaded dimension is worth fewer bytes on the least loaded one
  than ``chunk / THEMIS_THRESHOLD_DIVISOR``, the loads are already balanced and the chunk takes
  the baseline order. Loads reset per collective. All-to-all keeps the baseline order.

  trainsim refines the sort: with up to ``EXHAUSTIVE_DIMS`` active dimensions it scores every
  order (the sorted one included) by the largest accumulated load it would leave, then the
  total, and keeps the sorted order's result only if no order does better; the baseline order
  wins ties. Sorting alone can hand a slow dimension the largest share when its low load came
  from carrying little data, and lose to the baseline (e.g. Switch 8 at 100 GB/s x Switch 4 at
  25 GB/s: plain sorting is 13% slower than baseline; scored orders are not).
"""

from __future__ import annotations

from trainsim.enums import CommType

THEMIS_THRESHOLD_DIVISOR = 16  # ASTRA-sim OfflineGreedy: diff_size < recommended_chunk / 16
EXHAUSTIVE_DIMS = 4  # score every order up to this many active dimensions (4! = 24 orders)

_AG = int(CommType.ALL_GATHER)
_A2A = int(CommType.ALL_TO_ALL)


def baseline_order(comm_type: int, active: list[int]) -> list[int]:
    return list(reversed(active)) if comm_type == _AG else list(active)


class ThemisGreedy:
    """Per-collective Themis load balancer over the logical dimensions ``sizes`` (members) and
    ``bandwidths`` (B/s per link)."""

    __slots__ = ("sizes", "bandwidths", "load", "_order")

    def __init__(self, sizes: list[int], bandwidths: list[float]) -> None:
        self.sizes = sizes
        self.bandwidths = bandwidths
        self.load = [0.0] * len(sizes)
        self._order = list(range(len(sizes)))

    def order(self, comm_type: int, active: list[int], chunk: int) -> list[int]:
        """The dimension order of the next chunk of ``chunk`` bytes; updates the loads."""
        if comm_type == _A2A or len(active) < 2:
            return baseline_order(comm_type, active)
        load = self.load
        ag = comm_type == _AG
        self._order.sort(key=load.__getitem__, reverse=False)
        candidate = [d for d in self._order if d in active]
        if ag:
            candidate.reverse()
        loads = [load[d] for d in active]
        gap = max(loads) - min(loads)
        first = candidate[-1] if ag else candidate[0]
        n = self.sizes[first]
        gap_bytes = gap * self.bandwidths[first] / ((n - 1) / n)
        order = (
            candidate
            if gap_bytes >= chunk / THEMIS_THRESHOLD_DIVISOR
            else baseline_order(comm_type, active)
        )
        size = float(chunk)
        for d in order:
            n = self.sizes[d]
            if ag:
                load[d] += size * (n - 1) / self.bandwidths[d]
                size *= n
            else:
                load[d] += size * (n - 1) / n / self.bandwidths[d]
                size /= n
        return order


class RoundRobin:
    """Rotates the baseline order by one dimension per chunk."""

    __slots__ = ("counter",)

    def __init__(self) -> None:
        self.counter = 0

    def order(self, comm_type: int, ldims: int, active: list[int]) -> list[int]:
        full = list(range(ldims))
        if comm_type == _AG:
            full.reverse()
        k = self.counter % max(ldims, 1)
        self.counter = (self.counter + 1) % max(ldims, 1)
        rotated = full[k:] + full[:k]
        return [d for d in rotated if d in active]
