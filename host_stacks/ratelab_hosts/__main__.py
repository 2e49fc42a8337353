import sys

from ratelab_hosts.cli import main

sys.exit(main())
