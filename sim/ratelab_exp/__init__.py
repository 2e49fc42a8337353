"""ratelab-exp: experiment files (sim/experiments/README.md) run as sweeps on
an embedded Dask LocalCluster or an existing Dask cluster, with per-run
results kept for resuming, tables per level and a report.

    import ratelab_exp
    out = ratelab_exp.run_experiment("sim/experiments/e1.yaml", quick=True)
"""

from ratelab_exp.report import rebuild
from ratelab_exp.runner import run_experiment
from ratelab_exp.spec import load_experiment

__all__ = ["load_experiment", "rebuild", "run_experiment"]
