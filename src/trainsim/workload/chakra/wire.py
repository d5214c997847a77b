"""Chakra ET rank files: their names, varint-length-delimited framing, gzip detection
(DESIGN.md, workload layer; ``workload/chakra``; chakra-format.md §2).

A rank file is a plain stream of protobuf messages, each preceded by its length as an unsigned
base-128 varint: one ``GlobalMetadata``, then ``Node`` messages until EOF. There is no header.
Reading is streaming: one message's bytes are in memory at a time, read from a buffered file
object; gzip input (magic ``1f 8b``) is decompressed on the fly. Sizes are bytes.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable, Iterator
from io import BufferedIOBase
from pathlib import Path

from trainsim import budget
from trainsim.errors import TraceError

GZIP_MAGIC = b"\x1f\x8b"
MAX_MESSAGE_BYTES = 2**31 - 1
"""protobuf's own limit on one serialized message."""
_MAX_VARINT_BYTES = 10
_READ_CHUNK = 1 << 20
"""Messages larger than this are read in chunks, so a garbage length allocates nothing."""


def rank_file(prefix: str | os.PathLike[str], rank: int) -> Path:
    """``<prefix>.<rank>.et``, the name ASTRA-sim builds for each rank."""
    return Path(f"{os.fspath(prefix)}.{rank}.et")


def count_rank_files(prefix: str | os.PathLike[str]) -> int:
    """How many rank files ``<prefix>.0.et``, ``<prefix>.1.et``, ... exist without a gap."""
    count = 0
    while rank_file(prefix, count).is_file():
        count += 1
    return count


def encode_varint(value: int) -> bytes:
    """Unsigned base-128 varint of ``value`` (>= 0): 7 bits a byte, low group first."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class _BoundedGzip(gzip.GzipFile):
    """A gzip stream that refuses to expand past the ``decompressed`` limit of
    ``trainsim.budget`` (docs/limits.md): a small file that inflates to gigabytes is a
    :class:`TraceError` after that many bytes, not a machine out of memory."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "rb")
        self._path = path
        self._inflated = 0
        self._limit = 1 << 62 if budget.is_forced() else budget.LIMITS["decompressed"].value

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self._inflated += len(data)
        if self._inflated > self._limit:
            raise TraceError(
                f"the gzip stream expands past {self._limit >> 20:,} MiB, the limit of docs/limits.md "
                f"(a {self._path.stat().st_size:,}-byte file); decompress it yourself if it is real, or add --force",
                file=str(self._path),
            )
        return data


def open_trace(path: Path) -> BufferedIOBase:
    """Open a rank file for reading, decompressing it if it starts with the gzip magic (at
    most the ``decompressed`` limit of docs/limits.md)."""
    with open(path, "rb") as probe:
        magic = probe.read(len(GZIP_MAGIC))
    if magic == GZIP_MAGIC:
        return _BoundedGzip(path)
    return open(path, "rb")


def read_plain(stream: BufferedIOBase, limit: int) -> bytes | None:
    """The whole content of an uncompressed file stream of at most ``limit`` bytes, else None
    (nothing is read then)."""
    if isinstance(stream, gzip.GzipFile) or os.fstat(stream.fileno()).st_size > limit:
        return None
    return stream.read()


def iter_frames(stream: BufferedIOBase, *, file: str, rank: int) -> Iterator[tuple[int, bytes]]:
    """Yield ``(byte offset, message bytes)`` for each message until EOF.

    The stream is read in chunks of :data:`_READ_CHUNK` bytes. Raises :class:`TraceError` naming
    the file, rank and byte offset on a malformed length prefix or a message cut short by the end
    of the file.
    """
    read = stream.read
    buffer, pos, offset = b"", 0, 0  # offset: where buffer[pos] lies in the file
    while True:
        if len(buffer) - pos < _MAX_VARINT_BYTES:
            buffer = buffer[pos:] + read(_READ_CHUNK)
            pos = 0
            if not buffer:
                return
        length = buffer[pos]
        if length < 0x80:
            start = pos + 1
        else:
            length, start = _buffered_varint(buffer, pos, file=file, rank=rank, offset=offset)
        if length > MAX_MESSAGE_BYTES:
            raise TraceError(
                f"length prefix at byte {offset} says {length} bytes, over protobuf's 2 GiB limit",
                file=file,
                rank=rank,
            )
        used = start - pos
        stop = start + length
        if stop <= len(buffer):
            data, pos = buffer[start:stop], stop
        else:
            data = buffer[start:] + _read_exact(read, stop - len(buffer))
            buffer, pos = b"", 0
            if len(data) != length:
                raise TraceError(
                    f"truncated message at byte {offset}: its length prefix says {length} bytes, "
                    f"the file ends after {len(data)}",
                    file=file,
                    rank=rank,
                )
        yield offset, data
        offset += used + length


def _buffered_varint(
    buffer: bytes, pos: int, *, file: str, rank: int, offset: int
) -> tuple[int, int]:
    """Decode the varint at ``buffer[pos]`` (the buffer holds at least 10 bytes from ``pos``
    unless the file ends sooner); returns ``(value, position after it)``."""
    value = shift = 0
    for index in range(pos, min(len(buffer), pos + _MAX_VARINT_BYTES)):
        byte = buffer[index]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, index + 1
        shift += 7
    if len(buffer) - pos < _MAX_VARINT_BYTES:
        raise TraceError(
            f"truncated length prefix at byte {offset}: the file ends inside a varint",
            file=file,
            rank=rank,
        )
    raise TraceError(
        f"malformed length prefix at byte {offset}: varint longer than 10 bytes",
        file=file,
        rank=rank,
    )


def _read_exact(read: Callable[[int], bytes], length: int) -> bytes:
    """Up to ``length`` bytes (fewer only at EOF), allocating no more than what arrives."""
    if length <= _READ_CHUNK:
        return read(length)
    parts = []
    remaining = length
    while remaining:
        part = read(min(remaining, _READ_CHUNK))
        if not part:
            break
        parts.append(part)
        remaining -= len(part)
    return b"".join(parts)
