#!/usr/bin/env python3
"""The reference pages generated from the code, on a checkout: runs `python3 -m schedlab.refdocs` (the package
tools/py/schedlab/refdocs) with this interpreter, tools/py first on PYTHONPATH, as tools/schedlab does.

    tools/docs/reference.py --out DIR [--kernel build/kernel.elf] [--no-build]
"""

import os
import sys

here = os.path.dirname(os.path.realpath(__file__))
path = os.environ.get("PYTHONPATH")
os.environ["PYTHONPATH"] = os.path.join(here, "..", "py") + (os.pathsep + path if path else "")
os.execv(sys.executable, [sys.executable, "-m", "schedlab.refdocs", *sys.argv[1:]])
