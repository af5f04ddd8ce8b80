"""Intermediate models of an online run (--snapshots v1,v2,... --snapshot-by
iterations|sv|seconds, LaSVM 1.1's -l and -T): at each value the run's finished copy is taken,
and MODEL.v is written once the last machine of the training has reached v, from every
machine's model at v (a machine whose online phase ended before v gives its final model). The
online phase stops at the last value, as in LaSVM 1.1."""

import math

import numpy as np

from .drive import GRAIN, Observer
from .online_options import snapshot_path


class Snapshots:
    """The snapshots of one training: the results taken per machine, and the files written.
    ``build_model(results)`` assembles a model from one SolverResult per machine."""

    def __init__(self, values, by, model_file, build_model, n_machines, info, warn):
        self.values, self.by, self.model_file = values, by, model_file
        self.build_model, self.n_machines = build_model, n_machines
        self.info, self.warn = info, warn
        self.taken = []     # per machine: {value index: SolverResult}
        self.written = []   # dicts of path, value (and where the last machine was)

    def write(self, i, final_results, where=None):
        """MODEL.v of value ``i``: each machine's result at v, or its final one."""
        from ..io.model_file import write_model

        value = self.values[i]
        path = snapshot_path(self.model_file, value)
        per_machine = [taken.get(i, res) for taken, res in
                       zip(self.taken, list(final_results) + [None])]
        model = self.build_model(per_machine)
        write_model(model, path)
        entry = dict(path=path, value=value)
        text = ""
        if where is not None:
            entry.update(where)
            if self.n_machines == 1:
                text = (f"iterations {where['iterations']}, expansion {where['expansion']}, "
                        f"{where['seconds']:.3g} s, ")
        self.written.append(entry)
        self.info(f"snapshot {path}: {text}nSV {int(np.sum(model.nSV))}")

    def last(self, final_results):
        """After the last machine: the values it never reached (written when another
        machine reached them, else a warning)."""
        for i, value in enumerate(self.values):
            if i in self.taken[-1]:
                continue
            if any(i in taken for taken in self.taken):
                self.write(i, final_results)
            else:
                self.warn(f"WARNING: snapshot at {self.by} {value:g} not reached "
                          f"({snapshot_path(self.model_file, value)} not written)")


class SnapshotTaker(Observer):
    """One machine's snapshots: at each value its ``finished(run)`` result is taken (and the
    model written when this is the last machine); the online phase ends after the last."""

    def __init__(self, snapshots, machine, finished, final_results, next_value=0):
        self.s, self.machine = snapshots, machine
        self.finished, self.final_results = finished, final_results
        self.next_value = next_value  # index of the next value (in a state file)

    def _measure(self, run, drive):
        if self.s.by == "iterations":
            return run.processed
        if self.s.by == "sv":
            return run.n_expansion
        return drive.elapsed

    def room(self, run, drive):
        if self.next_value >= len(self.s.values):
            return math.inf
        if self.s.by == "iterations":
            return math.ceil(self.s.values[self.next_value]) - run.processed
        return GRAIN

    def stop(self, run, drive):
        if self.next_value >= len(self.s.values):
            return f"last snapshot ({self.s.by} {self.s.values[-1]:g})"
        return None

    def start(self, run, drive):
        self._take(run, drive)

    def after_step(self, run, drive):
        if drive.was_online and run.online:
            self._take(run, drive)

    def _take(self, run, drive):
        taken = self.s.taken[self.machine]
        while self.next_value < len(self.s.values) and \
                self._measure(run, drive) >= self.s.values[self.next_value]:
            taken[self.next_value] = self.finished(run).result()
            if self.machine == self.s.n_machines - 1:
                self.s.write(self.next_value, self.final_results,
                             dict(iterations=run.processed, expansion=run.n_expansion,
                                  seconds=drive.elapsed))
            self.next_value += 1
