"""`--dask` addresses checked before any work (issue 24): local:N needs N >= 1; a tcp address
must answer with a Dask handshake within the timeout, else one clear line (no hang, no
allocation of what a stranger's bytes announce)."""

import socket
import struct
import threading

import pytest

from tests.helpers.cli_errors import cli_error
from tests.sweep.conftest import write_spec
from trainsim.errors import ConfigError
from trainsim.sweep.runner import check_dask_address


def _server(reply: bytes | None):
    """A local TCP server that sends ``reply`` on each connection (None: stays silent)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(4)
    stop = threading.Event()

    def serve():
        sock.settimeout(0.2)
        conns = []
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            conns.append(conn)
            if reply is not None:
                conn.sendall(reply)
        for c in conns:
            c.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return f"tcp://127.0.0.1:{sock.getsockname()[1]}", stop, thread, sock


@pytest.fixture
def server(request):
    address, stop, thread, sock = _server(request.param)
    yield address
    stop.set()
    thread.join()
    sock.close()


HANDSHAKE = b"\x83\xabcompression\xc0\xa6python\x93\x03\x0b\x07\xafpickle-protocol\x05"
DASK_REPLY = struct.pack("<QQQ", 16 + len(HANDSHAKE), 1, len(HANDSHAKE)) + HANDSHAKE


@pytest.mark.parametrize(
    ("server", "match"),
    [
        (None, "is not a Dask scheduler: no handshake within 0.5 s"),
        (
            b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n",
            "its first bytes .* are not a Dask handshake",
        ),
        (b"\xff" * 64, "are not a Dask handshake"),
        (struct.pack("<QQQ", 40, 1, 24) + b"x" * 24, "its first message is not a Dask handshake"),
        (b"SSH-2.0", "the connection closed during the handshake|not a Dask"),
    ],
    indirect=["server"],
    ids=["silent", "http", "garbage", "other-framed", "short"],
)
def test_a_service_that_is_not_dask_is_refused(server, match):
    with pytest.raises(ConfigError, match=match):
        check_dask_address(server, timeout_s=0.5)


@pytest.mark.parametrize("server", [DASK_REPLY], indirect=True)
def test_a_dask_handshake_passes(server):
    check_dask_address(server, timeout_s=2.0)


@pytest.mark.parametrize(
    "address",
    ["local:0", "local:-3", "local:x", "tcp://host", "tcp://h:0", "tcp://h:99999", "udp://h:1"],
)
def test_malformed_addresses(address):
    with pytest.raises(ConfigError, match="--dask"):
        check_dask_address(address)


@pytest.mark.parametrize("address", ["local:0", "local:-3"])
def test_cli_local_zero_is_one_line(tmp_path, capsys, address):
    pytest.importorskip("distributed")
    spec = write_spec(tmp_path / "s.yaml", bws=(10,), sizes=(8,))
    cli_error(
        capsys,
        ["sweep", str(spec), "--store", str(tmp_path / "s.sqlite"), "--dask", address],
        2,
        "expected local:N with N >= 1",
    )
