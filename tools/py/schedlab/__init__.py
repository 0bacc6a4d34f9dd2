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
* reduces repeated runs to medians, spreads, bootstrap confidence intervals
  and slowdowns (``stats``, ``compare``), formats them (``table``) and exports
  records with each boot's calibration card (``writers``);
* sweeps one key of a scenario over values under one or more policies, with a
  table, CSV, JSON and a plot (``sweep``);
* turns a boot's trace dump (``trace=on``) into run intervals, slot-switch
  statistics, a gang co-scheduling check, Chrome/Perfetto JSON and a Gantt
  chart (``trace``);
* offers four commands, ``run``, ``compare``, ``sweep`` and ``trace`` (``commands``, ``cli``).

The console contract and the QEMU command are fixed in docs (DESIGN.md); any
line the harness does not know is ignored, so later kinds never break it.
"""
