"""``--executor dask://HOST:PORT``: the executor's tasks on a Dask distributed cluster (executor.py).

Start a scheduler and, on every machine, a worker that says how many cores it dedicates to boots (and has
this checkout built and installed: ``make deps && make``, the same QEMU):

    dask scheduler --port 8786
    dask worker HOST:8786 --nthreads 8 --resources cores=7      # 8 cores, one left to the host

A task asks for ``cores=cpus`` (a timed boot) or ``cores=1`` (deterministic, simulated), so a worker never
runs more boots than the cores it declared; on the worker the boot is pinned like a local ``--jobs`` boot
(affinity.CorePool, ``--reserve-cores`` travels with the task). The kernel image travels too: the submitting
side scatters its bytes once per SHA-256 and the worker keeps a copy by hash (``executor.with_image``). The
Runs come back pickled, so records are the same whatever ran them; ``placement`` says which host and cores.
``distributed`` is imported only here, only when asked for (make deps installs it; pyproject's extra "dask").
"""
from __future__ import annotations

from pathlib import Path

from . import affinity
from .executor import Executor, Task, note, run_task, with_image
from .qemu import HarnessError

_pools: dict = {}


def remote_task(task: Task, image: bytes | None, reserve: int):
    """What a worker runs: the task on its own host, pinned to cores of this host's pool."""
    pool = _pools.get(reserve)
    if pool is None:
        pool = _pools[reserve] = affinity.CorePool(reserve=reserve)
    return run_task(with_image(task, image), pool)


def _address(text: str) -> str:
    from .inputs import executor_address
    return executor_address(text)


class Dask(Executor):
    """Tasks submitted to a ``distributed.Client`` (an address, or a client the caller made: the tests'
    LocalCluster)."""

    name = "dask"
    local = False

    def __init__(self, address: str | None = None, journal=None, reserve: int = affinity.DEFAULT_RESERVE,
                 client=None):
        super().__init__(journal)
        try:
            from distributed import Client
        except ImportError:
            raise HarnessError("--executor dask://...: the distributed package is not installed "
                               "(make deps, or pip install 'distributed')") from None
        self._own = client is None
        try:
            self.client = client or Client(_address(address), timeout=30)
        except OSError as exc:
            raise HarnessError(f"--executor {address}: no Dask scheduler there ({exc})") from None
        self.reserve = reserve
        cores = [w.get("resources", {}).get("cores", 0)
                 for w in self.client.scheduler_info().get("workers", {}).values()]
        if not any(cores):
            raise HarnessError(f"--executor {address or 'dask'}: no worker declares cores: start workers with "
                               "`dask worker HOST:PORT --resources cores=N`")
        self.largest = max(cores)
        self.slots = int(sum(cores))
        self.window = 2 * self.slots
        self._images: dict = {}         # image hash -> its scattered future (the current copy)
        self._used: dict = {}           # task future key -> the image future it was submitted with

    def _image(self, task: Task):
        if task.kind != "qemu":
            return None
        if not Path(task.image).is_file():
            raise HarnessError(f"kernel {task.image} not found: build it with `make` (or pass --kernel)")
        if task.image_hash not in self._images:
            self._images[task.image_hash] = self.client.scatter(Path(task.image).read_bytes(), broadcast=False,
                                                                hash=False)
        return self._images[task.image_hash]

    def _start(self, task: Task):
        need = task.cores_needed
        if need > self.largest:
            raise HarnessError(f"{task.describe()}: needs {need} dedicated cores, and the largest Dask worker "
                               f"declares {self.largest:g} (--resources cores=N)")
        image = self._image(task)
        future = self.client.submit(remote_task, task, image, self.reserve, resources={"cores": need}, pure=False)
        self._used[future.key] = image          # the scattered image this attempt depends on
        return future

    def _restart(self, task: Task, failed_handle):
        """A retry after a lost worker: the scattered image may have died with it (its only copy), so when
        the failed attempt used the current copy it is scattered again before the task is resubmitted."""
        used = self._used.pop(getattr(failed_handle, "key", None), None)
        if used is not None and self._images.get(task.image_hash) is used:
            del self._images[task.image_hash]
        return self._start(task)

    def _wait(self, handle):
        try:
            return handle.result()
        finally:
            if handle.done() and handle.status == "finished":
                self._used.pop(handle.key, None)

    def _cancel(self, handle):
        try:
            handle.cancel()
        except Exception:       # noqa: BLE001 - a closed client: nothing left to cancel
            pass

    def close(self):
        if self._own:
            try:
                self.client.close()
            except Exception as exc:    # noqa: BLE001
                note(f"executor: closing the Dask client: {exc}")
