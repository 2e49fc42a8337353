"""Strict-priority queues: a configuration's classification rules as router.p4
table entries, and everything a configuration installs.

The reference model has one FIFO per port and no classification (it changes
queueing only, not a packet), so these entries come from the controller's own
`PortPriority` settings; `config_entries` is the model's `all_entries` plus
them, and is what the controller installs, diffs and reads back.
"""

from __future__ import annotations

from ratelab_model.p4_entries import TableEntry, all_entries

from ratelab_ctl.configfile import ControllerConfig, PortPriority

PROTOCOL_TABLE = "RouterIngress.classify.priority_protocol"
DSCP_TABLE = "RouterIngress.classify.priority_dscp"
SRC_PORT_TABLE = "RouterIngress.classify.priority_src_port"
DST_PORT_TABLE = "RouterIngress.classify.priority_dst_port"
PRIORITY_TABLES = (PROTOCOL_TABLE, DSCP_TABLE, SRC_PORT_TABLE, DST_PORT_TABLE)
SET_PRIORITY = "RouterIngress.classify.set_priority"


def priority_entries(priority: PortPriority) -> list[TableEntry]:
    """One entry per rule value; a TCP/UDP port goes into the source and the
    destination port tables (it matches either)."""
    p = priority.port
    out = [TableEntry(PROTOCOL_TABLE, (p, v), SET_PRIORITY, (lv,)) for v, lv in priority.protocols]
    out += [TableEntry(DSCP_TABLE, (p, v), SET_PRIORITY, (lv,)) for v, lv in priority.dscp]
    for table in (SRC_PORT_TABLE, DST_PORT_TABLE):
        out += [TableEntry(table, (p, v), SET_PRIORITY, (lv,)) for v, lv in priority.l4_ports]
    return out


def config_entries(cfg: ControllerConfig) -> list[TableEntry]:
    """Everything the controller installs for `cfg`: the model's entries (the
    keyless default first), then the classification rules."""
    entries = all_entries(cfg.router)
    for priority in cfg.priority:
        entries += priority_entries(priority)
    return entries


def priority_queues(cfg: ControllerConfig) -> dict[int, int]:
    """Port -> its number of strict-priority queues, for ports with more than one."""
    return {p.port: p.queues for p in cfg.priority if p.queues > 1}


def queue_notes(old: ControllerConfig, new: ControllerConfig) -> list[str]:
    """A changed number of queues cannot be written over P4Runtime: one note per
    port whose count changed (the switch takes it when it starts)."""
    before, after = priority_queues(old), priority_queues(new)
    return [
        f"port {p}: {after.get(p, 1)} priority queue(s) is the switch's setting, made when "
        "it starts (--priority-queues, see `ratelab-ctl switch-args`): restart the switch "
        "for it; the classification rules are written now"
        for p in sorted(set(before) | set(after))
        if before.get(p, 1) != after.get(p, 1)
    ]
