"""python3 -m schedlab.refdocs: the reference pages (tools/docs/reference.py)."""

import sys

from . import main

sys.exit(main())
