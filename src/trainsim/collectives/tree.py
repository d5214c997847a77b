"""Double binary tree all-reduce, ASTRA-sim's ``DoubleBinaryTreeAllReduce`` (astra-sim-semantics.md D4).

Each dimension has two trees over its n members (positions 0..n-1 in ring order):

- the *max* tree: a balanced binary subtree over positions 0..n-2, numbered in order (the
  root of a range is its middle), plus an extra root at position n-1 whose only child is the
  subtree's root;
- the *min* tree: the extra root at position 0, the subtree over positions 1..n-1.

For n-1 = 2^h - 1 this is ASTRA-sim's complete tree exactly (for 0..7: max tree 7<-3,
3<-{1,5}, 1<-{0,2}, 5<-{4,6}). Every message is the whole chunk; the phase ignores its
type (an all-reduce of the chunk, output = input). Per role (E = endpoint delay, C = chunk):

- leaf: E; send to parent; wait for the parent; E; done;
- intermediate: each child's arrival -> E + red(C); after the second such bundle, send up;
  on the parent's message E + red(C); send to the children; done (the downward reduction is
  ASTRA-sim's quirk, kept);
- root: the child's arrival -> E + red(C); send down; done.

An intermediate node with a single child (only for n-1 not of the form 2^h - 1, where
ASTRA-sim's tree builder misbehaves) waits for that one child.
"""

from __future__ import annotations

from typing import Any

from trainsim.collectives.base import Phase

LEAF, INTERMEDIATE, ROOT = 0, 1, 2
_BEGIN, _WAIT2, _WAIT1, _TO_PARENT, _FROM_PARENT, _TO_CHILDREN, _END = range(7)


def _subtree(lo: int, hi: int, parent: int, out: dict[int, tuple[int, list[int]]]) -> int:
    """Balanced in-order tree over positions lo..hi; returns its root position."""
    if lo > hi:
        return -1
    mid = (lo + hi) // 2
    out[mid] = (parent, [])
    left = _subtree(lo, mid - 1, mid, out)
    right = _subtree(mid + 1, hi, mid, out)
    out[mid][1].extend(c for c in (left, right) if c >= 0)
    return mid


def tree_links(n: int, max_tree: bool) -> dict[int, tuple[int, list[int]]]:
    """position -> (parent position or -1, child positions) of the max or min tree."""
    out: dict[int, tuple[int, list[int]]] = {}
    if n == 1:
        return {0: (-1, [])}
    if max_tree:
        root, lo, hi = n - 1, 0, n - 2
    else:
        root, lo, hi = 0, 1, n - 1
    sub = _subtree(lo, hi, root, out)
    out[root] = (-1, [sub])
    return out


_TREE_CACHE: dict[tuple[int, bool], dict[int, tuple[int, list[int]]]] = {}


def tree_role(n: int, max_tree: bool, position: int) -> tuple[int, int, list[int]]:
    """(role, parent position, child positions) of ``position``."""
    key = (n, max_tree)
    links = _TREE_CACHE.get(key)
    if links is None:
        links = _TREE_CACHE[key] = tree_links(n, max_tree)
    parent, children = links[position]
    if parent < 0:
        return ROOT, parent, children
    return (INTERMEDIATE if children else LEAF), parent, children


class DoubleBinaryTreePhase(Phase):
    __slots__ = ("role", "parent", "children", "state", "reductions", "waiting")

    def __init__(self, *args: Any, max_tree: bool = True) -> None:
        super().__init__(*args)
        members = self.members
        role, parent, children = tree_role(len(members), max_tree, self.index)
        self.role = role
        self.parent = members[parent] if parent >= 0 else -1
        self.children = [members[c] for c in children]
        self.state = _BEGIN
        self.reductions = 0
        self.waiting = len(self.children)

    def start(self) -> None:
        host = self.host
        size = self.data_size
        if self.role == LEAF:
            self.state = _TO_PARENT
            host.bundle(self, 0)
            return
        for child in self.children:
            host.recv(self, child, size)
        self.state = _WAIT2 if self.role == INTERMEDIATE else _WAIT1

    def on_recv(self, _arg: Any = None) -> None:
        host = self.host
        size = self.data_size
        state = self.state
        if self.role == LEAF:  # the parent's message
            self.state = _END
            host.bundle(self, 0)
        elif state in (_WAIT2, _WAIT1):
            self.waiting -= 1
            if self.role == ROOT:
                self.state = _TO_CHILDREN
            elif self.waiting > 0:
                self.state = _WAIT1
            else:
                self.state = _TO_PARENT
            host.bundle(self, size)
        elif state == _FROM_PARENT:
            self.state = _TO_CHILDREN
            host.bundle(self, size)

    def on_general(self, _arg: Any = None) -> None:
        host = self.host
        size = self.data_size
        state = self.state
        if self.role == LEAF:
            if state == _TO_PARENT:
                host.send(self, self.parent, size, self.parent)
                host.recv(self, self.parent, size)
                self.state = _FROM_PARENT
            elif state == _END:
                host.finish(self)
            return
        if self.role == INTERMEDIATE and self.reductions < len(self.children) - 1:
            # the first child's bundle completing does nothing (ASTRA-sim's ``reductions`` gate)
            self.reductions += 1
            return
        if state == _TO_PARENT:
            host.send(self, self.parent, size, self.parent)
            host.recv(self, self.parent, size)
            self.state = _FROM_PARENT
        elif state == _TO_CHILDREN:
            for child in self.children:
                host.send(self, child, size, child)
            self.state = _END
            host.finish(self)
