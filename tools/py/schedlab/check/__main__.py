"""python3 -m schedlab.check: the same as schedlab check."""
import sys

from . import main

sys.exit(main())
