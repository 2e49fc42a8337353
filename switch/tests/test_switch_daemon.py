"""The daemon's command line, startup errors and shutdown (in a subprocess)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import grpc
import pytest
from finsy.proto.p4.v1 import p4runtime_pb2 as p4r
from finsy.proto.p4.v1 import p4runtime_pb2_grpc
from ratelab_switch.daemon import main, run
from ratelab_switch.options import OptionsError, QueueRate, parse_options, parse_rate
from switch_fake_engine import FakeEngine
from switch_program import bmv2_json

HERE = Path(__file__).parent
LAUNCHER = HERE / "switch_daemon_with_fake_engine.py"


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "prog.json"
    path.write_bytes(bmv2_json())
    return str(path)


def test_simple_switch_grpc_command_lines(program: str) -> None:
    # The target options after `--`, as simple_switch_grpc wants them.
    o = parse_options(
        [
            "--device-id", "3", "--log-console", "-L", "debug", "--thrift-port", "9090",
            program, "--", "--grpc-server-addr", "127.0.0.1:50051", "--cpu-port", "255",
        ]
    )  # fmt: skip
    assert (o.json_path, o.device_id, o.grpc_server_addr, o.cpu_port) == (
        program,
        3,
        "127.0.0.1:50051",
        255,
    )
    assert o.log_console and o.log_level == "debug"
    assert o.thrift_port == 9090 and not any("thrift-port" in n for n in o.notes)
    # The same options on the other side of `--`, and --no-p4.
    o = parse_options(["--no-p4", "--cpu-port", "64", "--", "--device-id", "2"])
    assert o.json_path is None and o.cpu_port == 64 and o.device_id == 2
    assert o.grpc_server_addr == "0.0.0.0:9559"


def test_interfaces_queues_seed_and_pcap(tmp_path: Path) -> None:
    o = parse_options(
        [
            "--no-p4", "-i", "1@lo", "-i", "2@lo", "--seed", "7",
            "--queue-depth", "1=64", "--queue-rate", "1=10mbit", "--queue-rate", "2=1000pps",
            "--pcap", str(tmp_path),
        ]
    )  # fmt: skip
    assert o.interfaces == {1: "lo", 2: "lo"}
    assert o.seed == 7 and o.queue_depth == {1: 64}
    assert o.queue_rate == {1: QueueRate(10_000_000, "bps"), 2: QueueRate(1000, "pps")}
    assert o.pcap_dir == str(tmp_path)
    assert parse_options(["--pcap", "--no-p4"]).pcap_dir == "."


def test_rates() -> None:
    assert parse_rate("1gbit") == QueueRate(10**9, "bps")
    assert parse_rate("2.5Mbit") == QueueRate(2_500_000, "bps")
    assert parse_rate("3kpps") == QueueRate(3000, "pps")
    assert parse_rate("1kbps") == QueueRate(8000, "bps")  # tc: bytes per second
    assert parse_rate("500bit") == QueueRate(500, "bps")
    assert parse_rate("unlimited") == QueueRate(0, "bps")
    for bad in ("10", "fast", "0pps", "-1mbit"):
        with pytest.raises(OptionsError):
            parse_rate(bad)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        ([], "JSON program (or --no-p4) is required"),
        (["missing.json"], "does not exist"),
        (["--no-p4", "-i", "1@no-such-if0"], "interface 'no-such-if0' does not exist"),
        (["--no-p4", "-i", "1lo"], "PORT@IFACE"),
        (["--no-p4", "-i", "1@lo", "-i", "1@lo"], "given twice"),
        (["--no-p4", "--cpu-port", "x"], "not an integer"),
        (["--no-p4", "--cpu-port", "600"], "out of range"),
        (["--no-p4", "--log-level", "chatty"], "not one of"),
        (["--no-p4", "--grpc-server-addr", "9559"], "HOST:PORT"),
        (["--no-p4", "--queue-depth", "1"], "PORT=VALUE"),
        (["--no-p4", "--priority-queues", "1"], "--priority-queues: expected PORT=VALUE"),
        (["--no-p4", "--priority-queues", "1=9"], "--priority-queues queues: 9 is out of range"),
        (["--no-p4", "--priority-queues", "1=0"], "--priority-queues queues: 0 is out of range"),
        (["--no-p4", "--priority-queues", "512=2"], "--priority-queues port: 512 is out of range"),
        (["--no-p4", "--bogus"], "unrecognized arguments"),
        (["--no-p4", "--drop-port", "100"], "only 511 is supported"),
        (["--no-p4", "--max-port-count", "8", "-i", "9@lo"], "not below --max-port-count 8"),
        (["--no-p4", "--thrift-port", "x"], "--thrift-port: 'x' is not an integer"),
        (["--no-p4", "--thrift-port", "70000"], "--thrift-port: 70000 is out of range"),
    ],
)
def test_bad_command_lines(argv: list[str], needle: str) -> None:
    with pytest.raises(OptionsError, match=re.escape(needle)):
        parse_options(argv)


def test_main_reports_bad_input_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--no-p4", "-i", "1@no-such-if0"], engine_factory=lambda _: FakeEngine()) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no-such-if0" in err and "Traceback" not in err


def test_main_without_engine_extension_is_a_clear_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ratelab_switch.engine_binding", None)  # import fails
    assert main(["--no-p4", "--grpc-server-addr", "127.0.0.1:0"]) == 1
    err = capsys.readouterr().err
    assert "ratelab_engine extension" in err and err.count("\n") == 1


def test_run_loads_the_program_and_serves(program: str, capsys: pytest.CaptureFixture[str]) -> None:
    engine = FakeEngine()
    stop = threading.Event()
    opts = parse_options([program, "--grpc-server-addr", "127.0.0.1:0", "--device-id", "5"])
    t = threading.Thread(target=run, args=(opts, engine, stop))
    t.start()
    try:
        for _ in range(500):
            out = capsys.readouterr().out
            if "Server listening" in out:
                break
            stop.wait(0.01)
        port = int(out.strip().rsplit(":", 1)[1])
        assert engine.loaded == bmv2_json()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
            assert stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version
    finally:
        stop.set()
        t.join(timeout=10)
    assert not t.is_alive()


def test_run_rejects_a_program_the_engine_refuses(tmp_path: Path) -> None:
    from ratelab_switch.daemon import DaemonError

    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    opts = parse_options([str(bad), "--grpc-server-addr", "127.0.0.1:0"])
    with pytest.raises(DaemonError, match="no pipelines"):
        run(opts, FakeEngine(), threading.Event())


def test_a_thrift_port_given_and_taken_is_a_startup_error(
    program: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from ratelab_switch.daemon import DaemonError

    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        opts = parse_options([program, "--grpc-server-addr", "127.0.0.1:0"])
        opts.thrift_port = port
        with pytest.raises(DaemonError, match=f"--thrift-port: cannot listen on {port}"):
            run(opts, FakeEngine(), threading.Event())
    assert "Server listening" not in capsys.readouterr().out


def test_the_default_thrift_port_taken_is_a_warning_and_the_switch_serves(
    program: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Several switches on one machine: only the first gets 9090, the others still run.
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setattr("ratelab_switch.daemon.DEFAULT_THRIFT_PORT", port)
        opts = parse_options([program, "--grpc-server-addr", "127.0.0.1:0"])
        stop = threading.Event()
        stop.set()
        run(opts, FakeEngine(), stop)
    out, err = capsys.readouterr()
    assert out.startswith("Server listening on 127.0.0.1:")
    assert f"warning: no Thrift server: port {port} is taken" in err


@pytest.fixture
def daemon() -> Iterator[tuple[subprocess.Popen[str], int]]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), str(HERE), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        [sys.executable, str(LAUNCHER), "--no-p4", "--log-console", "-L", "debug", "--",
         "--grpc-server-addr", "127.0.0.1:0", "--device-id", "4", "--cpu-port", "64"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("Server listening on 127.0.0.1:"), line + proc.stderr.read()
        yield proc, int(line.strip().rsplit(":", 1)[1])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_daemon_serves_then_stops_cleanly_on_signal(
    daemon: tuple[subprocess.Popen[str], int], sig: signal.Signals
) -> None:
    proc, port = daemon
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
        assert stub.Capabilities(p4r.CapabilitiesRequest()).p4runtime_api_version
        with pytest.raises(grpc.RpcError) as e:
            stub.GetForwardingPipelineConfig(p4r.GetForwardingPipelineConfigRequest(device_id=1))
        assert e.value.code() == grpc.StatusCode.NOT_FOUND  # the daemon was told --device-id 4
    proc.send_signal(sig)
    assert proc.wait(timeout=10) == 0
    log = proc.stderr.read()  # type: ignore[union-attr]
    assert "Traceback" not in log
    assert "[INFO] shutting down" in log  # --log-console -L debug


def test_daemon_bad_interface_exits_nonzero_without_traceback() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE.parent), str(HERE), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, str(LAUNCHER), "--no-p4", "-i", "0@no-such-if0"],
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "ratelab-switch: error: -i: network interface 'no-such-if0' does not exist"
    )


class _DyingDataplane(FakeEngine):
    """A fake engine whose packet loop fails right after it starts."""

    def start(self, device: object, on_fatal: Callable[[str], None]) -> None:
        threading.Timer(0.05, on_fatal, args=("packet loop failed: boom",)).start()

    def stop(self) -> None:
        pass


def test_a_dying_packet_loop_stops_the_daemon_with_an_error() -> None:
    from ratelab_switch.daemon import DaemonError

    opts = parse_options(["--no-p4", "--grpc-server-addr", "127.0.0.1:0"])
    with pytest.raises(DaemonError, match="boom"):
        run(opts, _DyingDataplane(), threading.Event())


def test_log_file_and_levels(tmp_path: Path) -> None:
    import logging

    from ratelab_switch.daemon import setup_logging

    log_file = tmp_path / "switch.log"
    setup_logging(parse_options(["--no-p4", "--log-file", str(log_file), "-L", "warn"]))
    log = logging.getLogger("ratelab_switch")
    try:
        log.info("not shown")
        log.warning("shown")
        for h in log.handlers:
            h.flush()
        text = log_file.read_text()
        assert "shown" in text and "not shown" not in text
        setup_logging(parse_options(["--no-p4", "--log-console", "-L", "off"]))
        assert not log.isEnabledFor(logging.CRITICAL)
    finally:
        for h in list(log.handlers):
            h.close()
            log.removeHandler(h)


def _self_signed(tmp_path: Path) -> tuple[str, str]:
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


def test_tls_options_serve_p4runtime_over_tls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cert, key = _self_signed(tmp_path)
    opts = parse_options(
        ["--no-p4", "--", "--grpc-server-addr", "127.0.0.1:0", "--grpc-server-ssl",
         "--grpc-server-cert", cert, "--grpc-server-key", key]
    )  # fmt: skip
    stop = threading.Event()
    t = threading.Thread(target=run, args=(opts, FakeEngine(), stop))
    t.start()
    try:
        for _ in range(500):
            out = capsys.readouterr().out
            if "Server listening" in out:
                break
            stop.wait(0.01)
        port = int(out.strip().rsplit(":", 1)[1])
        creds = grpc.ssl_channel_credentials(root_certificates=Path(cert).read_bytes())
        with grpc.secure_channel(f"127.0.0.1:{port}", creds) as ch:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
            assert stub.Capabilities(p4r.CapabilitiesRequest(), timeout=10).p4runtime_api_version
        with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = p4runtime_pb2_grpc.P4RuntimeStub(ch)
            with pytest.raises(grpc.RpcError):
                stub.Capabilities(p4r.CapabilitiesRequest(), timeout=2)
    finally:
        stop.set()
        t.join(timeout=10)


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--grpc-server-ssl"], "needs --grpc-server-cert and --grpc-server-key"),
        (["--grpc-server-cert", "x.pem"], "need --grpc-server-ssl"),
        (
            ["--grpc-server-ssl", "--grpc-server-cert", "nope.pem", "--grpc-server-key", "k"],
            "does not exist",
        ),
        (["--grpc-server-ssl", "--grpc-server-with-client-auth"], "needs --grpc-server-cert"),
    ],
)
def test_bad_tls_options(extra: list[str], needle: str) -> None:
    with pytest.raises(OptionsError, match=re.escape(needle)):
        parse_options(["--no-p4", *extra])


def test_link_jitters() -> None:
    specs = ["1=1ms", "2=250us", "3=0"]
    o = parse_options(["--no-p4", *(t for s in specs for t in ("--link-jitter", s))])
    assert o.link_jitter == {1: 1000, 2: 250, 3: 0}
    for bad in ["1", "1=", "1=-5ms", "1=2h", "600=1ms"]:
        with pytest.raises(OptionsError, match="--link-jitter"):
            parse_options(["--no-p4", "--link-jitter", bad])


def test_link_delays() -> None:
    specs = ("1=20ms", "2=1.5s", "3=250", "4=500us", "5=0")
    o = parse_options(["--no-p4", *(t for s in specs for t in ("--link-delay", s))])
    assert o.link_delay == {1: 20_000, 2: 1_500_000, 3: 250, 4: 500, 5: 0}
    for bad in ("1=20 parsecs", "1=-5ms", "1", "512=1ms", "1=2h"):
        with pytest.raises(OptionsError, match="--link-delay"):
            parse_options(["--no-p4", "--link-delay", bad])
