"""schedlab harness: boot the kernel under QEMU, parse its console, compare policies.

The model.  The kernel is the only thing that measures: it runs a *scenario*
(its bootargs: settings such as ``policy=gang`` plus one ``job=<app>[:k=v,...]``
token per job), prints one ``RESULT`` line per finished job and one ``SUMMARY``
line, and exits QEMU with the verdict (0 iff every job finished ``check=ok``).
The harness never times anything itself; it

* builds the one QEMU command line (``qemu``) and turns one boot into a ``Run``:
  the raw console, the exit status, whether it had to be killed for a timeout,
  and the parsed console lines (``console``);
* runs every command's boots as tasks through one executor (``executor``): one after another, ``--jobs N``
  at a time on this host each pinned to cores of its own (``affinity``), or on a Dask cluster
  (``executor_dask``), results in submission order, a harness failure retried once then reported, finished
  boots journaled for ``--resume`` (``journal``); in Python, ``with executor.use(executor.Local(4)):`` around
  ``schedlab.run``/``compare`` does the same;
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
* keeps its core apart from its faces (``core``): how a command's boots run (``Settings``, the machine model
  parsed once), one boot or many, a comparison as data (``Comparison``); the Python API (``api``) and the
  commands are its two clients;
* offers the commands ``run``, ``compare``, ``sweep``, ``trace`` and ``reproduce`` (``commands``, ``cli``;
  the papers' results in ``reproduce/``, one *section* each), and ``calibrate``, ``validate`` (the
  simulator's costs and its check against QEMU), ``experiment`` (one-off measurements, ``experiments/``),
  ``bench``, ``explore``, ``check`` and ``record-consoles``, each a module with its own ``main`` - every
  command registered one way (``registry``: cli.py's ``COMMANDS``);
* builds what a command needs and does not find (``build``: the simulator, the host tools).

The console contract and the QEMU command are fixed in docs/design.md; any
line the harness does not know is ignored, so later kinds never break it.

The command is ``schedlab`` once installed (``pip install -e .``, which ``make deps`` runs), and
``tools/schedlab`` or ``python3 -m schedlab`` on a checkout. In Python (a notebook), ``run`` and
``compare`` are the two commands as functions (``api``)::

    import schedlab

    run = schedlab.run("policy=gang job=gauss:n=64 job=hog", cpus=2)
    assert run.ok                                   # every job check=ok, QEMU exited 0
    [(r["app"], r["elapsed_us"]) for r in run.results]      # the RESULT lines, numbers typed
    run.summary["makespan_us"]

    rows = schedlab.compare("job=gauss job=oddeven", cpus=2, policies=["timeslice", "gang"], repeat=3)
    {(r["policy"], r["app"]): r["slowdown"] for r in rows}  # median mix/alone per policy and job
    # pandas.DataFrame(rows) has one row per policy and job, with min, max and the bootstrap interval

``run(..., sim=True)`` runs the simulator instead of QEMU (any number of harts); ``model="iris"`` boots
under the machine model. Both raise ``HarnessError`` for what a user must fix (no kernel, a bad token).
"""

__all__ = ["run", "compare", "Record", "HarnessError"]


def __getattr__(name):
    """``run``, ``compare``, ``Record`` and ``HarnessError`` load the harness on first use, so the Makefile's helper
    (``python3 -m schedlab.model``) and the commands import only what they need."""
    if name in ("run", "compare"):
        from . import api
        return getattr(api, name)
    if name == "Record":
        from .core import Record
        return Record
    if name == "HarnessError":
        from .qemu import HarnessError
        return HarnessError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
