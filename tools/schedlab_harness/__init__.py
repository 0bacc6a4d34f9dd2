"""schedlab harness: boot the kernel under QEMU, parse its console, compare policies.

The model.  The kernel is the only thing that measures: it runs a *scenario*
(its bootargs: settings such as ``policy=gang`` plus one ``job=<app>[:k=v,...]``
token per job), prints one ``RESULT`` line per finished job and one ``SUMMARY``
line, and exits QEMU with the verdict (0 iff every job finished ``check=ok``).
The harness never times anything itself; it

* builds the one QEMU command line (``qemu``) and turns one boot into a ``Run``:
  the raw console, the exit status, whether it had to be killed for a timeout,
  and the parsed console lines (``console``);
* reads scenario files (``scenario``) and splits scenarios into settings and
  jobs, foreground or background (``mix``);
* reduces repeated runs to medians, spreads and slowdowns (``stats``,
  ``compare``), formats them (``table``) and exports records (``writers``);
* offers two commands, ``run`` and ``compare`` (``commands``, ``cli``).

The console contract and the QEMU command are fixed in docs (DESIGN.md); any
line the harness does not know is ignored, so later kinds (``TRACE``) never
break it.
"""
