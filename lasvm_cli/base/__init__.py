"""Plumbing under everything: errors and exit codes, the compiled-code cache, the clock, C's
rand(), progress bars and the training options' declaration type.
"""
