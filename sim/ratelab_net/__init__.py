"""ratelab-net: Mininet experiments with ratelab routers (docs/NET.md)."""
