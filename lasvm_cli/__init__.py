"""lasvm-cli: LIBSVM-compatible SVM training with Numba solvers.

This module must stay import-light (no numpy, no numba) so that ``--help`` is instant.
"""

__version__ = "0.1.0"
