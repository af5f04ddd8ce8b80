"""svm-train --partitions P: one SVM of any LIBSVM type (-s 0 to 4) over P parts of the
training data, each read where it is trained (training/cascade.py): in this process one part
after another, or on Dask workers with --workers N (a local cluster) or --scheduler ADDRESS. The training file may be a glob
pattern (quoted) naming several files; compressed files are one part each.
"""

from ..base.errors import ParameterError


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


def check_options(o):
    """What --partitions trains: every svm type (-s 0 to 4; C-SVC and nu-SVC one-vs-one) with
    our SMO; not -v, -b 1, a precomputed kernel, --stream or the online options, nor
    float32 rows."""
    from ..training.cascade import refused
    from ..training.online_options import online_requested

    p = o.params
    used = refused(p) + [name for name, bad in (
        ("-v", bool(o.nr_fold)), ("--stream", o.stream),
        ("the online options", online_requested(p))) if bad]
    if used:
        _error(f"--partitions: not with {', '.join(used)}")
    for name, used in (("--early-model", o.early_model),
                       ("--cascade-cache", o.cascade_cache)):
        if used is not None and used is not False and "--partitions" not in o.given:
            _error(f"{name}: only with --partitions")
    if o.cascade_cache is not None and not o.cascade_cache >= 0:
        _error("--cascade-cache must be 0 or more (MB)")
    if o.partitions < 1:
        _error("--partitions must be at least 1")


def main_partitions(o, info, warn, progress, save_model, check_outputs, check_model):
    """Train and save the model of --partitions (cli/train.py's helpers passed in)."""
    from ..io.byte_ranges import expand_sources
    from ..training.cascade import Cascade, InProcess, OnDask
    from ..training.params import check_parameter

    p = o.params
    try:
        expand_sources(o.input_file)
    except (OSError, ValueError):
        warn(f"can't open input file {o.input_file}")
        return 1
    check_outputs(o)
    cluster = client = None
    if o.workers or o.scheduler:
        from ..training.distributed import dask_available

        if not dask_available():
            _error("--workers and --scheduler need Dask: pip install 'lasvm-cli[dask]'")
        cluster, client = _dask(o)
    try:
        executor = OnDask(client) if client is not None else InProcess()
        cascade = Cascade(o.input_file, o.partitions, executor, zero_based=o.zero_based,
                          **({} if o.cascade_cache is None else
                             dict(cascade_cache=o.cascade_cache)))
        if cascade.n == 0:
            from ..base.errors import InputFormatError

            raise InputFormatError(o.input_file, None, "no training data (the file is empty "
                                   "or holds only comment lines)")
        if p.gamma == 0 and cascade.max_index > 0:
            p.gamma = 1.0 / cascade.max_index
        # nu-SVC's feasibility on every pair, from the parts' class counts
        err = check_parameter(p, cascade.count if p.svm_type == 1 else None, given=o.given)
        if err:
            _error(err)
        model = cascade.train(p, info=info, warn=warn, progress=progress is not None,
                              early=o.early_model)
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    check_model(model)
    return save_model(model, o)


def _dask(o):
    """(cluster or None, client): a local cluster of --workers processes (its workers' own
    log lines silenced: a part's bad line is reported once, here, as FILE:LINE), or a client
    of --scheduler's cluster."""
    import logging

    from dask.distributed import Client, LocalCluster

    from ..training.distributed import worker_env

    if o.scheduler:
        return None, Client(o.scheduler)
    cluster = LocalCluster(n_workers=o.workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0", env=worker_env(o.workers),
                           silence_logs=logging.CRITICAL)
    return cluster, Client(cluster)
