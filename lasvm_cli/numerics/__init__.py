"""Numerics: kernels, the kernel-row cache, training data in memory, class grouping, probability
calibration, measures and the model with its prediction.
"""
