"""Memory models behind one protocol: remote / pooled / disaggregated memory, and the
tri-level phase-change memory tier in ``memory.pcm`` (DESIGN.md, memory)."""

from trainsim.memory.remote import RemoteMemory

__all__ = ["RemoteMemory"]
