"""The one exception type the P4Runtime service raises: a gRPC status code and a message."""

from __future__ import annotations

import grpc


class P4RuntimeError(Exception):
    """An error with the canonical (google.rpc / gRPC) code the P4Runtime spec asks for."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def canonical_code(self) -> int:
        """The numeric google.rpc.Code value (grpc.StatusCode holds it as value[0])."""
        return int(self.code.value[0])

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"


def invalid(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.NOT_FOUND, message)


def already_exists(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.ALREADY_EXISTS, message)


def out_of_range(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.OUT_OF_RANGE, message)


def unimplemented(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.UNIMPLEMENTED, message)


def failed_precondition(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.FAILED_PRECONDITION, message)


def permission_denied(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.PERMISSION_DENIED, message)


def resource_exhausted(message: str) -> P4RuntimeError:
    return P4RuntimeError(grpc.StatusCode.RESOURCE_EXHAUSTED, message)
