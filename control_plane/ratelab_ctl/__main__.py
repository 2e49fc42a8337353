"""`python -m ratelab_ctl` = `ratelab-ctl`."""

import sys

from ratelab_ctl.cli import main

sys.exit(main())
