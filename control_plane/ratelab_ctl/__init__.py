"""ratelab's controller: configure router.p4 on a P4Runtime switch from a router
configuration file, change settings at run time, poll counters into a time series.

docs/CONTROLLER.md is the user's reference; docs/ROUTER_MODEL.md the contract
with the P4 program (which tables, counters and registers hold what).
"""

from ratelab_p4info import Schema, SchemaError

from ratelab_ctl.configfile import ConfigError, ControllerConfig, load_config, parse_config
from ratelab_ctl.connection import SwitchConnection, SwitchError, WriteError
from ratelab_ctl.controller import Controller, check_program
from ratelab_ctl.counters import CounterSnapshot
from ratelab_ctl.diff import Change, diff_configs, diff_entries
from ratelab_ctl.edit import with_aqm, with_route, with_utilisation

__all__ = [
    "Change",
    "ConfigError",
    "Controller",
    "ControllerConfig",
    "CounterSnapshot",
    "Schema",
    "SchemaError",
    "SwitchConnection",
    "SwitchError",
    "WriteError",
    "check_program",
    "diff_configs",
    "diff_entries",
    "load_config",
    "parse_config",
    "with_aqm",
    "with_route",
    "with_utilisation",
]
