import pytest

from trainsim.topology import MultiDimTopology


def test_dimension_zero_varies_fastest():
    t = MultiDimTopology(["Ring", "Switch"], [8, 4])
    assert t.coords(0) == (0, 0)
    assert t.coords(9) == (1, 1)
    assert t.rank_of((7, 3)) == 31
    assert t.first_diff_dim(9, 1) == 1
    assert t.first_diff_dim(9, 10) == 0
    assert t.first_diff_dim(9, 9) == -1
    assert t.dim_peers(9, 1) == [1, 9, 17, 25]


@pytest.mark.parametrize("sizes", [(7,), (4, 3), (2, 3, 4), (3, 1, 2, 2)])
def test_first_diff_dim_is_the_first_coordinate_that_differs(sizes):
    t = MultiDimTopology(["Ring"] * len(sizes), sizes)
    for src in range(t.npus):
        for dst in range(t.npus):
            differ = [d for d, (a, b) in enumerate(zip(t.coords(src), t.coords(dst), strict=True)) if a != b]
            assert t.first_diff_dim(src, dst) == (differ[0] if differ else -1)


@pytest.mark.parametrize(
    ("kind", "a", "b", "hops"),
    [("Ring", 0, 1, 1), ("Ring", 0, 7, 1), ("Ring", 0, 4, 4), ("Ring", 1, 6, 3), ("Switch", 0, 5, 2), ("FullyConnected", 0, 5, 1)],
)
def test_hops(kind, a, b, hops):
    assert MultiDimTopology([kind], [8]).hops(0, a, b) == hops


def test_rejects_unknown_kind():
    with pytest.raises(ValueError, match="unknown topology kind"):
        MultiDimTopology(["Torus"], [4])


@pytest.mark.parametrize(
    "kinds_sizes",
    [(("Switch", 8), ("Switch", 16)), (("Ring", 4), ("Mesh", 3), ("FullyConnected", 2)), (("Mesh", 4), ("Ring", 6), ("Switch", 2))],
)
@pytest.mark.parametrize("astra_rule", [True, False])
def test_shape_classes_are_equal_exactly_when_shapes_are(kinds_sizes, astra_rule):
    import numpy as np

    kinds, sizes = zip(*kinds_sizes, strict=True)
    topo = MultiDimTopology(list(kinds), list(sizes), **({} if astra_rule else {"bandwidths": [1.0 + d for d in range(len(sizes))]}))
    rng = np.random.default_rng(5)
    src = rng.integers(topo.npus, size=300)
    dst = rng.integers(topo.npus, size=300)
    classes = topo.shape_classes(src, dst)
    shapes = [topo.shape(int(a), int(b)) for a, b in zip(src, dst, strict=True)]
    for i in range(300):
        for j in range(i, 300):
            assert (shapes[i] == shapes[j]) == bool((classes[i] == classes[j]).all()), (src[i], dst[i], src[j], dst[j])
