"""Memory models behind one protocol: remote / pooled / disaggregated memory (DESIGN.md, memory)."""

from trainsim.memory.remote import RemoteMemory

__all__ = ["RemoteMemory"]
