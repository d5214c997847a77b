"""A job on the first N GPUs of a larger platform (DESIGN.md, optimize layer: strategy search).

The generator numbers ranks as the network does, dimension 0 fastest (``groups.RankLayout``;
``network_sizes`` must multiply to the rank count), so a job of ``n`` ranks placed on ranks
``0 .. n-1`` of the platform occupies whole dimensions ``0 .. k-1`` and the first ``n / (size_0
x ... x size_{k-1})`` positions of dimension ``k``. That is itself a platform: the same
dimensions with dimension ``k`` cut to that size and the later ones dropped. It is exact for
Switch and FullyConnected dimensions (a subset of a switch or of a full mesh is one); a Ring
cut short is not a ring, so a cut through a Ring dimension is refused, as is a platform with a
physical fabric (its links do not cut this way) or a job that does not fill whole positions.
The platform file is edited as a document, so the result is validated by the same parser.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from trainsim.errors import ConfigError


def _clos_dims(doc: dict[str, Any], file: str) -> dict[str, Any]:
    """``doc`` with a dims-less clos fabric replaced by its derived dims (docs/topologies.md):
    the sub-platform of a job is cut from those, as the congestion-unaware search sees them."""
    from trainsim.config.platform import parse_platform
    from trainsim.units import ASTRA_GBPS, GBPS

    platform = parse_platform(doc, file)
    unit = ASTRA_GBPS if platform.compat == "astra" else GBPS  # what the file's bandwidth_gbps means
    out = copy.deepcopy(doc)
    out["network"] = {"dims": [
        {"topology": d.kind, "size": d.size, "bandwidth_gbps": d.bandwidth / unit, "latency_ns": d.latency_ns}
        for d in platform.network.dims
    ]}
    return out


def sub_platform_document(doc: dict[str, Any], gpus: int, file: str) -> dict[str, Any]:
    """The platform document for ranks ``0 .. gpus-1`` of ``doc`` (a native platform file); a
    clos fabric without dims is cut as its derived dims (the fabric itself is left out then)."""
    network = doc.get("network") if isinstance(doc, dict) else None
    fabric = network.get("fabric") if isinstance(network, dict) else None
    if isinstance(fabric, dict) and fabric.get("kind") == "clos" and not network.get("dims"):  # type: ignore[union-attr]
        whole = _clos_dims(doc, file)
        if gpus != math.prod(d["size"] for d in whole["network"]["dims"]):
            return sub_platform_document(whole, gpus, file)
        return doc
    dims = network.get("dims") if isinstance(network, dict) else None
    if (
        not isinstance(dims, list)
        or not dims
        or not all(isinstance(d, dict) and isinstance(d.get("size"), int) for d in dims)
    ):
        raise ConfigError(
            "expected network.dims, a list of dimensions with integer sizes",
            file=file,
            field="network.dims",
        )
    sizes = [int(d["size"]) for d in dims]
    total = math.prod(sizes)
    if gpus < 1 or gpus > total:
        raise ConfigError(
            f"--gpus {gpus}: the platform has {total} NPUs ({' x '.join(map(str, sizes))})",
            file=file,
            field="network.dims",
        )
    if gpus == total:
        return doc
    if network.get("fabric") is not None:  # type: ignore[union-attr]
        raise ConfigError(
            f"a job of {gpus} of the {total} NPUs on a platform with a fabric: its links do not cut to a sub-platform",
            file=file,
            field="network.fabric",
        )
    out = copy.deepcopy(doc)
    new_dims = []
    filled = 1
    for i, d in enumerate(dims):
        if filled * sizes[i] <= gpus and gpus % (filled * sizes[i]) == 0:
            new_dims.append(copy.deepcopy(d))
            filled *= sizes[i]
            if filled == gpus:
                break
            continue
        part = gpus // filled
        if gpus % filled or sizes[i] % part:
            raise ConfigError(
                f"--gpus {gpus} is not a whole number of positions of dimension {i} (the first {filled} NPUs fill dimensions 0..{i - 1}, dimension {i} has {sizes[i]})",
                file=file, field=f"network.dims[{i}].size",
            )  # fmt: skip
        if str(d.get("topology", "")) == "Ring":
            raise ConfigError(
                f"--gpus {gpus} cuts Ring dimension {i} to {part} of {sizes[i]}: the first {part} NPUs of a ring are not a ring",
                file=file,
                field=f"network.dims[{i}].topology",
            )
        cut = copy.deepcopy(d)
        cut["size"] = part
        new_dims.append(cut)
        break
    out["network"]["dims"] = new_dims
    return out
