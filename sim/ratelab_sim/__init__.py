"""ratelab's network harness: namespaces, veth pairs and switch processes that
always clean up after themselves. Shared by the PTF runner (ptf_tests/run.py)
and by the experiments of `make run`.
"""

from ratelab_sim.netns import (
    NAME_PREFIX,
    HarnessError,
    Netns,
    VethPair,
    disable_offloads,
    run_in_netns,
    sweep,
    unique_prefix,
)
from ratelab_sim.signals import terminate_as_exception
from ratelab_sim.switch import QueueSetting, SwitchError, SwitchProcess, resolve_target

__all__ = [
    "NAME_PREFIX",
    "HarnessError",
    "Netns",
    "QueueSetting",
    "SwitchError",
    "SwitchProcess",
    "VethPair",
    "disable_offloads",
    "resolve_target",
    "run_in_netns",
    "sweep",
    "terminate_as_exception",
    "unique_prefix",
]
