"""Shared pieces of ratelab's PTF tests: the base test class (P4Runtime session,
pipeline push, configuration through ratelab_ctl, counter reads), scapy layers
for RBCC, and the lockstep reference model."""
