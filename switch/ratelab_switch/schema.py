"""The shared P4Info schema (ratelab_p4info) answering with P4Runtime status codes:
a lookup of an entity the P4Info lacks is NOT_FOUND, a P4Info that cannot be
indexed INVALID_ARGUMENT. The entity types come from ratelab_p4info itself."""

from __future__ import annotations

from ratelab_p4info import Schema as _SharedSchema

from .errors import invalid, not_found


class Schema(_SharedSchema):
    missing_error = staticmethod(not_found)
    malformed_error = staticmethod(invalid)
