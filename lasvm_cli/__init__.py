"""lasvm-cli: LIBSVM-compatible SVM training with Numba solvers.

This module must stay import-light (no numpy, no numba) so that ``--help`` is instant.
"""

import os

__version__ = "0.1.0"

# numba's OpenMP threads (parallel kernel rows) wait for work passively unless the user says
# otherwise: GNU OpenMP's default spinning collapses when the cores are shared with other
# processes (docs/warm-server.md, threads).
# Set before numba loads libgomp, which reads it once.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
