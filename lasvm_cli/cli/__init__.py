"""Command-line layer: click commands over LIBSVM-style argv parsers (one module a command)."""
