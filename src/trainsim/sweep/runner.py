"""Executes a sweep: local processes by default, a Dask cluster when asked.

Work is cut into batches (several combinations per task) so that short simulations are not
dominated by task overhead; finished batches are written to the store as they arrive, so an
interrupted sweep keeps them and a re-run skips them.
"""

from __future__ import annotations

import errno
import os
import re
import socket
import struct
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
    """Run every combination missing from ``store``; ``dask`` is ``tcp://HOST:PORT`` or ``local:N``
    (checked before any work: :func:`check_dask_address`)."""
    if dask:
        check_dask_address(dask)
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


def run_items(items: list[Item], jobs: int, record: Callable[[list[dict[str, Any]]], None]) -> None:
    """Evaluate ``items`` (key, params, document) on ``jobs`` local processes (inline for 1),
    handing each finished batch's rows to ``record`` as it arrives."""
    _run_local(items, jobs, record)


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


DASK_HANDSHAKE_S = 1.5
"""Seconds to wait for a Dask scheduler's handshake (it sends one as soon as a client connects)."""


def check_dask_address(address: str, *, timeout_s: float = DASK_HANDSHAKE_S) -> None:
    """``local:N`` with N >= 1, or ``tcp://HOST:PORT`` where a Dask scheduler answers.

    A scheduler writes its handshake on connection: one message framed as distributed's TCP
    comm frames it (8-byte little-endian total length, 8-byte frame count, 8 bytes per frame
    length, then msgpack with the keys ``compression``, ``python``, ``pickle-protocol``). Anything
    else within ``timeout_s`` (silence, an HTTP banner, lengths of exabytes) is a ConfigError,
    before dask's client would try to allocate what a stranger's bytes announce."""
    if address.startswith("local:"):
        text = address.split(":", 1)[1]
        if not text.isdigit() or int(text) < 1:
            raise ConfigError(f"--dask {address!r}: expected local:N with N >= 1 workers", field="dask")
        return
    m = re.fullmatch(r"tcp://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})", address)
    if m is None or not 0 < int(m.group(2)) < 65536:
        raise ConfigError(f"--dask {address!r}: expected tcp://HOST:PORT (PORT 1..65535) or local:N", field="dask")
    host, port = m.group(1).strip("[]"), int(m.group(2))
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as conn:
            conn.settimeout(timeout_s)
            header = _recv_exactly(conn, 16)
            total, frames = struct.unpack("<QQ", header)
            if not (16 < total <= 1 << 16 and 1 <= frames <= 16):
                raise ConfigError(
                    f"{address} is not a Dask scheduler: its first bytes {header[:16]!r} are not a Dask handshake",
                    field="dask", hint="give the scheduler's address (dask scheduler prints it), or local:N",
                )
            body = _recv_exactly(conn, total - 8)
    except TimeoutError:
        raise ConfigError(f"{address} is not a Dask scheduler: no handshake within {timeout_s:g} s", field="dask",
                          hint="give the scheduler's address (dask scheduler prints it), or local:N") from None
    except OSError as exc:
        raise ConfigError(f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}", field="dask") from None
    if b"python" not in body or b"compression" not in body:
        raise ConfigError(f"{address} is not a Dask scheduler: its first message is not a Dask handshake", field="dask",
                          hint="give the scheduler's address (dask scheduler prints it), or local:N")


def _recv_exactly(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionResetError(errno.ECONNRESET, "the connection closed during the handshake")
        data += chunk
    return data


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
