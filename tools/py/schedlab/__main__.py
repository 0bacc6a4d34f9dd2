"""``python -m schedlab``: the same as the ``schedlab`` command."""

import sys

from .cli import main

sys.exit(main())
