"""The controller: pipeline push, configuration, run-time updates, counter reads.

Every write follows the same rule: validate fully, build every P4Runtime
update (which checks each value against the P4Info widths), and only then
send. The entries themselves come from `ratelab_model.p4_entries`, so what
is installed is by construction what the reference model runs with.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from finsy.proto.p4.config.v1 import p4info_pb2
from finsy.proto.p4.v1 import p4runtime_pb2
from ratelab_model.p4_entries import TableEntry, port_entries
from ratelab_p4info import Schema, SchemaError, load_p4info

from ratelab_ctl import counters as counters_mod
from ratelab_ctl.configfile import ConfigError, ControllerConfig
from ratelab_ctl.connection import SwitchConnection, SwitchError
from ratelab_ctl.diff import Change, diff_configs, diff_entries, initial_changes, summarize
from ratelab_ctl.entities import (
    DELETE,
    INSERT,
    MODIFY,
    EncodeError,
    counter_read_entity,
    describe,
    entry_from_pb,
    register_read_entity,
    table_read_entity,
    update_pb,
)
from ratelab_ctl.priority import PRIORITY_TABLES, config_entries, priority_entries

# The tables a configuration fills (docs/ROUTER_MODEL.md), keyless one first.
ROUTER_TABLE = "RouterIngress.router_config"
LPM_TABLE = "RouterIngress.ipv4_lpm"
PORT_TABLE = "RouterIngress.port_config"
DECAY_TABLE = "RouterIngress.admission.red_decay"
RECIP_TABLE = "RouterIngress.rbcc.recip"
CONFIG_TABLES = (ROUTER_TABLE, LPM_TABLE, PORT_TABLE, DECAY_TABLE, RECIP_TABLE, *PRIORITY_TABLES)

_KIND = {"insert": INSERT, "modify": MODIFY, "delete": DELETE}


def check_program(cfg: ControllerConfig, schema: Schema) -> None:
    """Does the configuration fit the compiled program? Raises ConfigError (with
    the file position of the offending setting)."""
    try:
        recip = schema.tables[RECIP_TABLE]
        ports = schema.tables[PORT_TABLE]
        lpm = schema.tables[LPM_TABLE]
        decay = schema.tables[DECAY_TABLE]
        if ROUTER_TABLE not in schema.tables:
            raise SchemaError(f"the P4Info has no table named {ROUTER_TABLE!r}")
        max_ports = min(ports.size, schema.counters["RouterEgress.port_out"].size)
    except SchemaError as e:
        raise ConfigError(cfg.locate(""), "", f"the P4Info is not router.p4's: {e}") from None
    r = cfg.router
    if r.abt_slots != recip.size:
        raise cfg.error(
            "rbcc.abt_slots",
            f"expected the compiled program's ABT_SLOTS ({recip.size}), got {r.abt_slots}",
        )
    for p in r.ports:
        if p.port >= max_ports:
            raise cfg.error(
                f"ports.{p.port}",
                f"expected a port below the program's MAX_PORTS ({max_ports}), got {p.port}",
            )
    if len(r.routes) > lpm.size:
        raise cfg.error("routes", f"expected at most {lpm.size} routes, got {len(r.routes)}")
    for priority in cfg.priority:
        for entry in priority_entries(priority):
            if entry.table not in schema.tables:
                raise cfg.error(
                    f"ports.{priority.port}.priority",
                    f"the compiled program has no classification table {entry.table}",
                )
    for table in PRIORITY_TABLES:
        count = sum(1 for p in cfg.priority for e in priority_entries(p) if e.table == table)
        if count and count > schema.tables[table].size:
            raise cfg.error(
                "ports",
                f"the priority rules need {count} entries in {table}, "
                f"the program has {schema.tables[table].size}",
            )
    used = 0
    for entry in port_entries(r):
        if entry.table == DECAY_TABLE:
            used += 1
            if used > decay.size:
                raise cfg.error(
                    f"ports.{entry.key[0]}.aqm",
                    f"the RED decay tables need more than the program's {decay.size} entries",
                )


def build_updates(
    schema: Schema, changes: Sequence[Change]
) -> list[tuple[list[p4runtime_pb2.Update], list[str]]]:
    """Encode every change, grouped by kind (deletes, modifies, inserts) so that
    each group can be sent after the previous one completed."""
    groups: dict[str, tuple[list[p4runtime_pb2.Update], list[str]]] = {}
    for c in changes:
        try:
            pb = update_pb(schema, _KIND[c.kind], c.entry)
        except EncodeError as e:
            raise SwitchError(f"cannot encode {c.kind} {describe(c.entry)}: {e}") from None
        updates, labels = groups.setdefault(c.kind, ([], []))
        updates.append(pb)
        labels.append(f"{c.kind} {describe(c.entry)}")
    return [groups[k] for k in ("delete", "modify", "insert") if k in groups]


class Controller:
    """One switch, one P4Info. `log` receives one-line progress messages."""

    def __init__(
        self,
        conn: SwitchConnection,
        schema: Schema | None = None,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.conn = conn
        self._schema = schema
        self.log = log or (lambda _msg: None)
        self._gauges: bool | None = None  # None: not tried yet

    @property
    def schema(self) -> Schema:
        """The P4Info given, else the one the switch runs."""
        if self._schema is None:
            self._schema = Schema(self.conn.get_p4info())
        return self._schema

    # -- pipeline -------------------------------------------------------------------

    def push_pipeline(
        self, device_config: bytes | str | Path, p4info: p4info_pb2.P4Info | str | Path
    ) -> None:
        """Install a compiled program (BMv2 JSON bytes or its path) and its P4Info;
        the switch's tables and registers start empty."""
        if not isinstance(p4info, p4info_pb2.P4Info):
            p4info = load_p4info(p4info)
        if not isinstance(device_config, bytes):
            try:
                device_config = Path(device_config).read_bytes()
            except OSError as e:
                raise SchemaError(f"{device_config}: cannot read: {e.strerror}") from None
        self.conn.set_pipeline(p4info, device_config)
        self._schema = Schema(p4info)
        self._gauges = None
        self.log(f"pipeline pushed to {self.conn.address} ({len(device_config)} bytes)")

    # -- writing --------------------------------------------------------------------

    def write_changes(self, changes: Sequence[Change]) -> None:
        groups = build_updates(self.schema, changes)  # everything is built before any write
        for updates, labels in groups:
            self.conn.write(updates, labels)

    def apply_config(self, cfg: ControllerConfig) -> list[Change]:
        """Install a whole configuration on a freshly pushed pipeline: the router
        settings, routes, ports, RED decay tables and the reciprocal table."""
        check_program(cfg, self.schema)
        changes = initial_changes(config_entries(cfg))
        self.write_changes(changes)
        self.log(f"configuration applied: {summarize(changes, tables=True)}")
        return changes

    def update(self, old: ControllerConfig, new: ControllerConfig) -> list[Change]:
        """Take the switch from `old` to `new` with the fewest writes."""
        check_program(new, self.schema)
        changes = diff_configs(old, new)
        self.write_changes(changes)
        self.log(f"configuration updated: {summarize(changes, tables=True)}")
        return changes

    def installed_entries(self) -> list[TableEntry]:
        """What the switch holds in the configuration tables, in the model's form.
        The router_config default is included when the switch can read it back."""
        schema = self.schema
        ids = [schema.tables[t].id for t in CONFIG_TABLES if t != ROUTER_TABLE]
        entities = self.conn.read([table_read_entity(i) for i in ids])
        out = [self._decode(e.table_entry) for e in entities if e.HasField("table_entry")]
        try:
            default = self.conn.read([table_read_entity(schema.tables[ROUTER_TABLE].id, True)])
        except SwitchError:
            default = []  # a target that cannot read default entries: always rewrite it
        out[:0] = [self._decode(e.table_entry) for e in default if e.HasField("table_entry")]
        return out

    def _decode(self, pb: p4runtime_pb2.TableEntry) -> TableEntry:
        try:
            return entry_from_pb(self.schema, pb)
        except EncodeError as e:
            raise SwitchError(
                f"the switch holds an entry this P4Info cannot describe: {e}"
            ) from None

    def plan(self, cfg: ControllerConfig) -> tuple[list[TableEntry], list[Change]]:
        """(installed entries, the changes that would make the switch hold `cfg`)."""
        check_program(cfg, self.schema)
        installed = self.installed_entries()
        return installed, diff_entries(installed, config_entries(cfg))

    def reconcile(self, cfg: ControllerConfig) -> list[Change]:
        """Diff the switch's actual entries against `cfg` and write the difference."""
        _, changes = self.plan(cfg)
        self.write_changes(changes)
        self.log(f"configuration reconciled: {summarize(changes, tables=True)}")
        return changes

    # -- reading --------------------------------------------------------------------

    def configured_ports(self) -> list[int]:
        """Ports with a port_config entry on the switch."""
        table = self.schema.tables[PORT_TABLE]
        entities = self.conn.read([table_read_entity(table.id)])
        ports = {self._decode(e.table_entry).key[0] for e in entities}
        return sorted(int(p) for p in ports if isinstance(p, int))

    def routes_installed(self) -> list[TableEntry]:
        table = self.schema.tables[LPM_TABLE]
        entities = self.conn.read([table_read_entity(table.id)])
        return [self._decode(e.table_entry) for e in entities]

    def read_counters(self, ports: Iterable[int] | None = None) -> counters_mod.CounterSnapshot:
        """One snapshot of every per-port counter (and the queue gauges where the
        target serves registers) for `ports` (default: the configured ports)."""
        schema = self.schema
        wanted = sorted(self.configured_ports() if ports is None else ports)
        now = time.time()
        entities = self.conn.read(
            [counter_read_entity(i) for i in counters_mod.counter_ids(schema)]
        )
        registers = None
        if self._gauges is not False:
            try:
                regs = self.conn.read(
                    [register_read_entity(i) for i in counters_mod.gauge_ids(schema)]
                )
                registers = [e.register_entry for e in regs if e.HasField("register_entry")]
                self._gauges = True
            except SwitchError:
                self._gauges = False  # BMv2: registers are not served over P4Runtime
        values = counters_mod.decode(
            schema,
            wanted,
            [e.counter_entry for e in entities if e.HasField("counter_entry")],
            registers,
        )
        return counters_mod.CounterSnapshot(now, values, registers is not None)
