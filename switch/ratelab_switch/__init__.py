"""ratelab-switch: a simple_switch_grpc-compatible P4Runtime daemon over ratelab's engine."""

__version__ = "0.1.0"
