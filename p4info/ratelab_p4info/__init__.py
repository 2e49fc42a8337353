"""One P4Info schema for every ratelab component that reads a P4Info: the
controller (ratelab_ctl) and the switch's P4Runtime server (ratelab_switch).

Entities are looked up by id, full name or alias; see schema.py.
"""

from ratelab_p4info.schema import (
    ActionInfo,
    ActionProfileInfo,
    ActionRefInfo,
    ControllerHeaderInfo,
    CounterInfo,
    DigestInfo,
    EntityIndex,
    MatchFieldInfo,
    MatchKind,
    MetadataFieldInfo,
    MeterInfo,
    ParamInfo,
    RegisterInfo,
    ScalarType,
    Schema,
    SchemaError,
    TableInfo,
    ValueSetInfo,
    load_p4info,
)

__all__ = [
    "ActionInfo",
    "ActionProfileInfo",
    "ActionRefInfo",
    "ControllerHeaderInfo",
    "CounterInfo",
    "DigestInfo",
    "EntityIndex",
    "MatchFieldInfo",
    "MatchKind",
    "MetadataFieldInfo",
    "MeterInfo",
    "ParamInfo",
    "RegisterInfo",
    "ScalarType",
    "Schema",
    "SchemaError",
    "TableInfo",
    "ValueSetInfo",
    "load_p4info",
]
