"""The P4Info protobuf classes (p4info_pb2, p4types_pb2) from finsy's generated modules,
loaded without importing the whole finsy package (whose import pulls in its gRPC
controller and costs more than a whole compilation)."""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any

_FINSY_NAME = "finsy.proto.p4.config.v1"
_PRIVATE = "ratelab_p4c._p4info_proto"


def _load() -> tuple[Any, Any]:
    if f"{_FINSY_NAME}.p4info_pb2" in sys.modules:
        mod = sys.modules[f"{_FINSY_NAME}.p4info_pb2"]
        return mod, sys.modules[f"{_FINSY_NAME}.p4types_pb2"]
    if f"{_PRIVATE}.p4info_pb2" not in sys.modules:
        spec = importlib.util.find_spec("finsy")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("finsy is not installed")
        base = next(iter(spec.submodule_search_locations))
        pkg = types.ModuleType(_PRIVATE)
        pkg.__path__ = [f"{base}/proto/p4/config/v1"]
        sys.modules[_PRIVATE] = pkg
        for name in ("p4types_pb2", "p4info_pb2"):
            full = f"{_PRIVATE}.{name}"
            sub = importlib.util.spec_from_file_location(full, f"{pkg.__path__[0]}/{name}.py")
            assert sub is not None and sub.loader is not None
            module = importlib.util.module_from_spec(sub)
            sys.modules[full] = module
            sub.loader.exec_module(module)
    return sys.modules[f"{_PRIVATE}.p4info_pb2"], sys.modules[f"{_PRIVATE}.p4types_pb2"]


p4info_pb2, p4types_pb2 = _load()
