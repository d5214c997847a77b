"""Memory models behind one protocol (``protocol.MemoryModel``, the seam the executor is handed):
remote / pooled / disaggregated memory (``remote``), and the tri-level phase-change memory tier
in ``memory.pcm`` (DESIGN.md, memory)."""

from trainsim.memory.protocol import MemoryModel, MemoryTier
from trainsim.memory.remote import RemoteMemory

__all__ = ["MemoryModel", "MemoryTier", "RemoteMemory"]
