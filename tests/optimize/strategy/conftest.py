"""Small models and platforms for the strategy-search tests (data written here, not read from
outside the repository)."""

import json

import pytest
import yaml


@pytest.fixture
def tiny_model(tmp_path):
    """A GPT-2-shaped config.json: 4 layers of 512, 16 heads, sequence 256."""
    path = tmp_path / "tiny.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "gpt2",
                "n_embd": 512,
                "n_layer": 4,
                "n_head": 16,
                "vocab_size": 1000,
                "n_positions": 256,
            }
        )
    )
    return str(path)


def write_platform(path, dims):
    path.write_text(
        yaml.safe_dump({"network": {"dims": dims}, "system": {"local_mem_bw_gbps": 2039}})
    )
    return str(path)


@pytest.fixture
def dgx16(tmp_path):
    """Two DGX-like nodes: Switch 8 at 300 GB/s x Switch 2 at 25 GB/s."""
    return write_platform(
        tmp_path / "dgx16.yaml",
        [{"topology": "Switch", "size": 8, "bandwidth_gbps": 300, "latency_ns": 700},
         {"topology": "Switch", "size": 2, "bandwidth_gbps": 25, "latency_ns": 2000}],
    )  # fmt: skip


@pytest.fixture
def dgx64(tmp_path):
    """Eight DGX-like nodes (more GPUs than the jobs of the tests use)."""
    return write_platform(
        tmp_path / "dgx64.yaml",
        [{"topology": "Switch", "size": 8, "bandwidth_gbps": 300, "latency_ns": 700},
         {"topology": "Switch", "size": 8, "bandwidth_gbps": 25, "latency_ns": 2000}],
    )  # fmt: skip
