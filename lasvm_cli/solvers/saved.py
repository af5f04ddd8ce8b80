"""A solver state restored from a state file (--resume): saved arrays copied back into the
live ones in place (the compiled code keeps the same arrays), shape and dtype checked."""

import numpy as np


def load_into(dst, src, name):
    """dst[...] = src, or ValueError naming the array when its shape or dtype differs."""
    src = np.asarray(src)
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError(f"state array {name}: {src.dtype}{src.shape}, expected "
                         f"{dst.dtype}{dst.shape}")
    dst[...] = src
