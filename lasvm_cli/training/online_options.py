"""The online driver's options (svm-train's --save-state, --resume, --stop-*, --snapshots,
--trace, --test ...), normalised from the DRIVER_OPTIONS rows (lasvm_cli/solvers), which are
their one declaration: what they mean is docs/commands.md's "Long online runs"."""

import dataclasses
import math

from ..base.errors import ParameterError
from ..solvers import DRIVER_OPTIONS


# TrainParams field -> command-line option (for messages), from the driver options' rows: those
# without a default, whose presence asks for the driver (the others only tune it)
OPTION_NAMES = {o.field: o.flags[0] for o in DRIVER_OPTIONS if o.default is None}
SNAPSHOT_BY = next(o.choices for o in DRIVER_OPTIONS if o.field == "snapshot_by")


# One field per DRIVER_OPTIONS row (its name and default), and the model file (--snapshots'
# file names): the rows are the one declaration of these options.
_OptionFields = dataclasses.make_dataclass(
    "_OptionFields", [(o.field, object, dataclasses.field(default=o.default))
                      for o in DRIVER_OPTIONS] + [("model_file", object, None)])


@dataclasses.dataclass
class OnlineOptions(_OptionFields):
    """The online driver's options, normalised: numbers typed, --snapshots a sorted tuple."""

    def __post_init__(self):
        self.save_every, self.trace_every = float(self.save_every), int(self.trace_every)
        self.snapshots = parse_snapshots(self.snapshots)

    @classmethod
    def from_params(cls, p):
        """Options from TrainParams (missing fields read as unset); None when none is set."""
        if not online_requested(p):
            return None
        o = cls(**{f.name: getattr(p, f.name, f.default) for f in dataclasses.fields(cls)})
        o.check()
        return o

    def check(self):
        if self.snapshot_by not in SNAPSHOT_BY:
            _error(f"unknown --snapshot-by '{self.snapshot_by}' (choose from "
                   f"{', '.join(SNAPSHOT_BY)})")
        if self.trace_every < 1:
            _error("--trace-every < 1")
        if self.save_every < 0:
            _error("--save-every < 0")
        for name in ("stop_iterations", "stop_sv", "stop_seconds"):
            v = getattr(self, name)
            if v is not None and v < 0:
                _error(f"{OPTION_NAMES[name]} < 0")
        if self.snapshots and not self.model_file:
            _error("--snapshots needs a model file name")
        if self.test_file and not self.trace:
            _error("--test needs --trace")

    def used(self):
        return [OPTION_NAMES[f] for f in OPTION_NAMES if getattr(self, f)]


def online_requested(p):
    """True when any option of this module is set on TrainParams ``p``."""
    return any(getattr(p, f, None) not in (None, "", ()) for f in OPTION_NAMES)


def parse_snapshots(text):
    """'1000,2000,5000' (commas or spaces) -> sorted tuple of positive floats."""
    if text is None or text == "":
        return ()
    if isinstance(text, (list, tuple)):
        items = list(text)
    else:
        items = [t for t in str(text).replace(",", " ").split() if t]
    try:
        values = sorted(float(t) for t in items)
    except ValueError:
        _error(f"invalid value '{text}' for --snapshots (a list such as 1000,2000,5000)")
    if any(not math.isfinite(v) or v < 0 for v in values):
        _error(f"invalid value '{text}' for --snapshots (values must be >= 0)")
    return tuple(values)


def snapshot_path(model_file, value):
    return f"{model_file}.{value:g}"


def _error(msg):
    raise ParameterError(f"ERROR: {msg}")


