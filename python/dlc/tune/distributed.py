"""Measuring on a Dask cluster.

Candidates build on any worker (a build compiles for the task's target,
whatever CPU runs it); each is measured on a worker whose CPU *is* that
target, one measurement at a time per worker. Dask's worker resources say
both: a worker started with the resource :func:`measure_resource` names
(``python -m dlc.tune --resource`` prints this machine's) and the amount 1
takes the measurements of its target, one after another:

    dask scheduler                                  # machine A
    dask worker tcp://A:8786 --nthreads 1 \\
        --resources "$(python -m dlc.tune --resource)=1"     # each measuring machine
    dask worker tcp://A:8786 --nthreads 4           # build-only machines

    from dask.distributed import Client
    dlc.tune(model, x, records="r.jsonl", trials=800, executor=Client("tcp://A:8786"))

Give a measuring machine one measuring worker (``--nthreads 1``, or the
resource amount 1 on a worker of more threads): two measurements at once on
one CPU distort each other. A build is a Python process of its own per
candidate; its library (the candidate's code, kilobytes to megabytes with
the task's constant weight) travels to the measuring worker through Dask.
"""

from .tasks import target_key


def measure_resource(key_or_target=None):
    """The Dask resource of the machines that measure for a target (its
    key, a dlc.Target, or None: this machine's)."""
    from ..target import Target

    if key_or_target is None:
        key_or_target = Target.host()
    if not isinstance(key_or_target, str):
        key_or_target = target_key(key_or_target)
    return f"dlc-measure-{key_or_target}"


def local_cluster(workers=2, **kwargs):
    """A dask.distributed LocalCluster of `workers` processes, each of one
    thread and holding this machine's measuring resource, and its Client
    (for tests and single machines)."""
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           resources={measure_resource(): 1}, dashboard_address=None,
                           **kwargs)
    return cluster, Client(cluster)
