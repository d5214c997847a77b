"""Executes a sweep: local processes by default, a Dask cluster when asked.

Work is cut into batches (several combinations per task) so that short simulations are not
dominated by task overhead; finished batches are written to the store as they arrive, so an
interrupted sweep keeps them and a re-run skips them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from trainsim import budget
from trainsim.errors import ConfigError
from trainsim.sweep.evaluate import run_batch
from trainsim.sweep.spec import SweepSpec, combination_key
from trainsim.sweep.store import SweepStore

Item = tuple[str, dict[str, Any], dict[str, Any]]
Progress = Callable[[int, int], None]


@dataclass
class SweepSummary:
    total: int
    skipped: int
    ran: int
    statuses: dict[str, int]
    first_error: str | None = None
    """The error of the first combination that ended in status ``error``, if any."""


def pending_items(spec: SweepSpec, store: SweepStore) -> tuple[list[Item], int]:
    """Combinations not yet in the store (deduplicated by key) and the number already there."""
    done = store.done_keys()
    items: list[Item] = []
    seen: set[str] = set()
    skipped = 0
    for params, doc in spec.combinations():
        key = combination_key(doc)
        if key in seen:
            continue
        seen.add(key)
        if key in done:
            skipped += 1
        else:
            items.append((key, params, doc))
    return items, skipped


def batches(items: list[Item], workers: int, *, max_batch: int = 64) -> Iterator[list[Item]]:
    """About eight batches per worker, between 1 and ``max_batch`` combinations each."""
    size = max(1, min(max_batch, len(items) // max(1, workers * 8)))
    for i in range(0, len(items), size):
        yield items[i : i + size]


def run_sweep(
    spec: SweepSpec,
    store: SweepStore,
    *,
    jobs: int | None = None,
    dask: str | None = None,
    progress: Progress | None = None,
) -> SweepSummary:
    """Run every combination missing from ``store``; ``dask`` is ``tcp://HOST:PORT`` or ``local:N``."""
    items, skipped = pending_items(spec, store)
    total = len(items) + skipped
    store.set_meta("axis_fields", {a.label: a.field for group in spec.axis_list() for a in group})  # units for plots
    statuses: dict[str, int] = {}
    errors: list[str] = []

    def record(rows: list[dict[str, Any]]) -> None:
        store.add(rows)
        for row in rows:
            statuses[row["status"]] = statuses.get(row["status"], 0) + 1
            if row["status"] == "error" and not errors:
                errors.append(row["error"])
        if progress:
            progress(sum(statuses.values()), len(items))

    if progress:
        progress(0, len(items))
    if items:
        if dask:
            _run_dask(items, dask, record)
        else:
            _run_local(items, jobs or os.cpu_count() or 1, record)
    return SweepSummary(total=total, skipped=skipped, ran=sum(statuses.values()), statuses=statuses, first_error=next(iter(errors), None))


def _run_local(items: list[Item], jobs: int, record: Callable[[list[dict[str, Any]]], None]) -> None:
    if jobs <= 1:
        for batch in batches(items, 1):
            record(run_batch(batch))
        return
    with ProcessPoolExecutor(max_workers=jobs, initializer=_exit_with_parent, initargs=(os.getpid(),)) as pool:
        force = budget.is_forced()  # --force reaches the workers' checks too
        futures: set[Future[list[dict[str, Any]]]] = {pool.submit(_run_batch, b, force) for b in batches(items, jobs)}
        try:
            while futures:
                finished, futures = wait(futures, return_when=FIRST_COMPLETED)
                for fut in finished:
                    record(fut.result())
        except BaseException:
            for fut in futures:
                fut.cancel()
            raise


def _run_batch(batch: list[Item], force: bool) -> list[dict[str, Any]]:
    """:func:`run_batch` in a worker, with the sweep's ``--force`` (docs/limits.md)."""
    with budget.forced(force):
        return run_batch(batch)


def _exit_with_parent(parent: int) -> None:
    """Pool-worker initializer: the worker ends when the sweep process that started it is gone.
    A sweep killed outright (SIGKILL, the OOM killer, a batch scheduler's limit) cannot tell
    its workers, and they would wait for tasks forever; its results so far are in the store."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="trainsim-sweep-parent-watch", daemon=True).start()


def _run_dask(items: list[Item], address: str, record: Callable[[list[dict[str, Any]]], None]) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError("--dask needs dask.distributed", hint="pip install 'trainsim[dask]'") from None
    cluster = None
    if address.startswith("local:"):
        try:
            workers = int(address.split(":", 1)[1])
        except ValueError:
            raise ConfigError(f"--dask {address!r}: expected local:N with N a number of workers", field="dask") from None
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    elif address.startswith("tcp://"):
        try:
            client = Client(address, timeout="20s")
        except OSError as exc:
            raise ConfigError(f"cannot reach the Dask scheduler at {address}: {exc}", field="dask") from None
    else:
        raise ConfigError(f"--dask {address!r}: expected tcp://HOST:PORT or local:N", field="dask")
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        futures = [client.submit(run_batch, b, pure=False) for b in batches(items, workers)]
        for fut in as_completed(futures):
            record(fut.result())
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
